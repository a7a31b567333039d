"""Bad input to the `ethlab` commands: one clear line, a non-zero exit, no traceback, and nothing brought up
(every value is checked before any fabric exists). The named cases are those of the hardening issue; the
hypothesis test throws generated arguments at every subcommand (in-process `main(argv)`, `--dry-run` where a
command would bring a fabric up) and accepts only a clean answer."""

from __future__ import annotations

import json
import string
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ethlab.cli import main

SPEC = {"name": "tiny", "topology": {"name": "leafspine"}, "seed": 7, "repetitions": 1,
        "engine": {"rate_mbps": 10}, "traffic": {"pattern": "all_reduce", "size": "64KiB", "iterations": 2},
        "policies": [{"name": "ecmp"}]}


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """main(argv) as a user runs it: the exit code and everything printed; a traceback fails the test."""
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse
        code = exit_.code if isinstance(exit_.code, int) else 1
    out = capsys.readouterr()
    text = out.out + out.err
    assert "Traceback" not in text, text
    return code, text


def traffic(tmp_path: Path, *extra: str, pattern: str = "all_reduce", topo: str = "leafspine") -> list[str]:
    return ["traffic", "run", pattern, "--topo", topo, "--size", "16KiB", "--out", str(tmp_path / "out"), *extra]


def assert_refused(code: int, text: str, *words: str) -> None:
    assert code != 0, text
    lines = [ln for ln in text.splitlines() if ln.strip()]
    error_lines = [ln for ln in lines if "error" in ln]
    assert error_lines, text
    for word in words:
        assert word in text, (word, text)
    assert " failed: " not in text, f"reported as an internal failure, not as bad input: {text}"


@pytest.mark.parametrize(("extra", "pattern", "topo", "words"), [
    ((), "nosuch", "leafspine", ("unknown pattern 'nosuch'",)),
    (("--size", "lots"), "all_reduce", "leafspine", ("bad size 'lots'",)),
    (("--mtu", "10"), "all_reduce", "leafspine", ("MTU", "got 10")),
    (("--mtu", "9000"), "all_reduce", "leafspine", ("link MTU 1500",)),
    (("--algorithm", "zzz"), "all_reduce", "leafspine", ("no algorithm 'zzz'",)),
    (("--pattern-param", "slices=-3"), "all_reduce", "leafspine", ("slices must be >= 1",)),
    (("--pattern-param", "slices"), "all_reduce", "leafspine", ("KEY=VALUE",)),
    (("--ecn", "a/b/c"), "all_reduce", "leafspine", ("--ecn", "KMIN/KMAX/PMAX")),
    (("--ecn", "50/5/0.2"), "all_reduce", "leafspine", ("kmin <= kmax",)),
    (("--size", "0"), "all_reduce", "leafspine", ("size", "at least 1 byte")),
    (("--iterations", "0"), "all_reduce", "leafspine", ("--iterations", "must be >= 1")),
    (("--rate-mbps", "-5"), "all_reduce", "leafspine", ("--rate-mbps",)),
    (("--rate-mbps", "nan"), "all_reduce", "leafspine", ("--rate-mbps",)),
    (("--planes", "5"), "all_reduce", "leafspine", ("planes", "1 plane(s)")),
    (("--time-limit", "-1"), "all_reduce", "leafspine", ("--time-limit",)),
    (("--reaction-param", "g=0.1"), "all_reduce", "leafspine", ("needs --reaction",)),
    ((), "all_reduce", "nosuchtopo", ("unknown topology",)),
])
def test_traffic_run_refuses_before_bring_up(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             extra: tuple[str, ...], pattern: str, topo: str,
                                             words: tuple[str, ...]) -> None:
    code, text = run_cli(traffic(tmp_path, *extra, pattern=pattern, topo=topo), capsys)
    assert_refused(code, text, *words)
    assert not (tmp_path / "out").exists()  # nothing ran


def test_traffic_run_dry_run_accepts_good_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, text = run_cli(traffic(tmp_path, "--ecn", "5/50/0.2", "--iterations", "2", "--dry-run"), capsys)
    assert code == 0 and "checked: 2 collective(s)" in text and "nothing brought up" in text
    assert not (tmp_path / "out").exists()


def _spec_file(tmp_path: Path, data: object, name: str = "spec.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return path


def test_run_refuses_binary_and_bad_specs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    binary = tmp_path / "spec.bin"
    binary.write_bytes(bytes(range(256)) * 4)
    code, text = run_cli(["run", str(binary), "--out", str(tmp_path / "res")], capsys)
    assert_refused(code, text, "not UTF-8 text")
    bad_engine = {**SPEC, "engine": {"rate_mbps": 10, "time_limit_s": -1}}
    code, text = run_cli(["run", str(_spec_file(tmp_path, bad_engine)), "--out", str(tmp_path / "res")], capsys)
    assert_refused(code, text, "time limit", "must be > 0")
    for traffic_part, word in (({"pattern": "all_reduce", "size": 0}, "at least 1 byte"),
                               ({"pattern": "all_reduce", "size": "1KiB", "iterations": 0}, "iterations"),
                               ({"pattern": "all_reduce", "size": "1KiB", "params": {"planes": 5}}, "plane(s)")):
        code, text = run_cli(["run", str(_spec_file(tmp_path, {**SPEC, "traffic": traffic_part})),
                              "--out", str(tmp_path / "res")], capsys)
        assert_refused(code, text, word)
    code, text = run_cli(["run", str(_spec_file(tmp_path, SPEC)), "--repetitions", "0"], capsys)
    assert_refused(code, text, "--repetitions")
    assert not (tmp_path / "res").exists()


def test_compare_and_report_on_missing_or_foreign_directories(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    code, text = run_cli(["compare", str(tmp_path / "nope"), str(tmp_path / "nope2")], capsys)
    assert_refused(code, text, "not an experiment results directory")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "summary.json").write_text("{not json")
    code, text = run_cli(["compare", str(tmp_path / "a"), str(tmp_path / "a")], capsys)
    assert_refused(code, text, "not a results summary")
    (tmp_path / "a" / "summary.json").write_text(json.dumps({"policies": 3}))
    code, text = run_cli(["compare", str(tmp_path / "a"), str(tmp_path / "a")], capsys)
    assert_refused(code, text, "not a results summary")
    code, text = run_cli(["compare", str(tmp_path / "a"), str(tmp_path / "a"), "--tolerance", "-1"], capsys)
    assert_refused(code, text, "--tolerance")


def test_up_refuses_bad_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, text = run_cli(["up", "leafspine", "--rate-scale", "-1", "--dry-run"], capsys)
    assert_refused(code, text, "--rate-scale")
    code, text = run_cli(["up", "leafspine", "--sample", "0", "--dry-run"], capsys)
    assert_refused(code, text, "--sample")
    code, text = run_cli(["up", "leafspine", "--program", str(tmp_path / "x.p4"), "--dry-run"], capsys)
    assert code != 0 and "not found" in text
    code, text = run_cli(["up", "leafspine", "--spines", "2", "--dry-run"], capsys)
    assert code == 0 and "nothing brought up" in text


def test_a_user_sees_one_line_not_a_traceback() -> None:
    """As a subprocess, the way a user runs it."""
    done = subprocess.run([sys.executable, "-m", "ethlab.cli", "traffic", "run", "nosuch", "--topo", "leafspine",
                           "--out", "/nonexistent/never-created"], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr + done.stdout
    assert [ln for ln in done.stderr.splitlines() if ln.strip()] == [
        "ethlab: error: unknown pattern 'nosuch'; known: all_gather, all_reduce, all_to_all, broadcast, incast, "
        "reduce_scatter, sendrecv"]


# ---- generated arguments ---------------------------------------------------------------------------------
WORDS = st.sampled_from(["", "0", "-1", "-5", "1", "2", "5", "3.5", "1e400", "nan", "inf", "-inf", "lots", "x/y/z",
                         "5/50/0.2", "50/5/0.2", "1/2", "a=b", "slices=-3", "slices=2", "planes=9", "KiB",
                         "16KiB", "0KiB", "1e3", "\u00e9\u00df", "--", "ring", "tree", "rhd", "zzz"])
TEXT = st.text(alphabet=string.printable, max_size=12)
VALUE = st.one_of(WORDS, TEXT, st.integers(-10, 10**6).map(str), st.floats(allow_nan=True).map(str))

TRAFFIC_OPTIONS = ["--size", "--iterations", "--algorithm", "--planes", "--pattern-param", "--rate-mbps",
                   "--port-rate-mbps", "--rate-scale", "--queue-depth", "--reaction", "--reaction-param", "--format",
                   "--mtu", "--seed", "--sample", "--time-limit", "--loss-grace", "--max-packets", "--ecn",
                   "--policy", "--target", "--gap", "--size-scale", "--spines", "--leaves"]
FLAGS = ["--no-ecn"]
PATTERNS = st.sampled_from(["all_reduce", "all_gather", "reduce_scatter", "all_to_all", "moe", "broadcast",
                            "sendrecv", "incast", "nosuch", ""])


@st.composite
def option_list(draw: st.DrawFn, names: list[str], flags: list[str] = FLAGS) -> list[str]:
    argv: list[str] = []
    for name in draw(st.lists(st.sampled_from(names), max_size=5)):
        argv += [name, draw(VALUE)]
    if flags and draw(st.booleans()):
        argv.append(draw(st.sampled_from(flags)))
    return argv


@st.composite
def spec_text(draw: st.DrawFn) -> bytes:
    """A spec as a user might write it wrong: a good one with values replaced or keys dropped, or junk."""
    kind = draw(st.sampled_from(["mutated", "junk", "binary"]))
    if kind == "binary":
        return draw(st.binary(min_size=1, max_size=64))
    if kind == "junk":
        return draw(st.text(max_size=80)).encode()
    data: dict = json.loads(json.dumps(SPEC))
    for _ in range(draw(st.integers(1, 3))):
        section = draw(st.sampled_from(["top", "engine", "traffic", "topology"]))
        key = draw(st.sampled_from({"top": ["name", "seed", "repetitions", "target", "sample_interval_s", "policies",
                                            "faults", "fabric"],
                                    "engine": ["rate_mbps", "mtu", "time_limit_s", "format", "reaction", "burst",
                                               "loss_grace_s", "max_packets"],
                                    "traffic": ["pattern", "size", "iterations", "algorithm", "params"],
                                    "topology": ["name", "params"]}[section]))
        value = draw(st.one_of(VALUE, st.integers(-5, 5), st.floats(allow_nan=True), st.none(), st.booleans(),
                               st.lists(st.integers(-2, 2), max_size=2), st.dictionaries(TEXT, st.integers(-2, 9),
                                                                                         max_size=2)))
        target = data if section == "top" else data[section]
        if draw(st.booleans()):
            target[key] = value
        else:
            target.pop(key, None)
    return yaml.safe_dump(data).encode()


@st.composite
def any_command(draw: st.DrawFn, tmp: Path) -> list[str]:
    which = draw(st.sampled_from(["traffic", "run", "up", "compare", "report", "topo-show", "topo-list",
                                  "clean-list", "none"]))
    if which == "traffic":
        pattern = draw(PATTERNS)
        topo = draw(st.sampled_from(["leafspine", "line", "erack", "nosuch", str(tmp / "missing.yaml")]))
        head = ["traffic", "run"] + ([pattern] if pattern else []) + ["--topo", topo, "--out", str(tmp / "out")]
        return head + draw(option_list(TRAFFIC_OPTIONS)) + ["--dry-run"]
    if which == "run":
        path = tmp / "gen-spec.yaml"
        path.write_bytes(draw(spec_text()))
        return ["run", str(path), "--out", str(tmp / "res")] + draw(option_list(["--repetitions", "--seed",
                                                                                 "--target"], [])) + ["--dry-run"]
    if which == "up":
        topo = draw(st.sampled_from(["leafspine", "line", "nosuch"]))
        return ["up", topo] + draw(option_list(["--rate-scale", "--sample", "--policy", "--target", "--spines",
                                                "--program"], ["--check"])) + ["--dry-run"]
    if which == "compare":
        return ["compare", draw(st.sampled_from([str(tmp), str(tmp / "nope"), str(tmp / "gen-spec.yaml")])),
                str(tmp)] + draw(option_list(["--tolerance"], []))
    if which == "report":
        return ["report", draw(st.sampled_from([str(tmp / "nope"), str(tmp / "empty")]))]
    if which == "topo-show":
        return ["topo", "show", draw(st.sampled_from(["leafspine", "line", "erack", "nosuch", str(tmp / "x.yaml")]))] \
            + draw(option_list(["--spines", "--leaves", "--n", "--gpus", "--planes", "--radix"], []))
    if which == "topo-list":
        return ["topo", "list"]
    if which == "clean-list":
        return ["clean", "--list"]
    return draw(st.lists(VALUE, max_size=3))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(data=st.data())
def test_generated_arguments_never_reach_a_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     data: st.DataObject) -> None:
    (tmp_path / "empty").mkdir(exist_ok=True)
    argv = data.draw(any_command(tmp_path))
    code, text = run_cli(argv, capsys)
    assert isinstance(code, int)
    assert " failed: " not in text, (argv, text)  # bad input is an error line, never an internal failure
    if code != 0 and argv and argv[0] in ("traffic", "run", "up", "compare", "topo"):
        assert "error" in text.lower() or "usage:" in text or "not found" in text, (argv, text)
    assert not (tmp_path / "out").exists() and not (tmp_path / "res").exists()  # --dry-run: nothing ran
