"""Generated bad arguments and files for every `ethlab` and `p4exec` subcommand, run as a user runs them (a
subprocess): no traceback, no hang over 30 s, and a refusal is one error line with a non-zero exit
(issue 34). The files are the awkward kinds: binary, non-UTF-8, a FIFO, a directory, a missing parent, a
symlink, /dev/zero; the numbers NaN, inf, negative and huge. Commands that would bring a fabric up get
--dry-run; ethlab's state and run directories are private to the test, so `clean` and `down` touch nothing
else on the machine. Bounded: a fixed number of examples per command family, each at most 30 s."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.cli import run_main

ROOT = Path(__file__).resolve().parents[2]
HANG_S = 30
NUMBERS = ["nan", "inf", "-inf", "-1", "-5", "0", "1e400", "99999999999999999999", str(2 ** 64), "1", "3.5",
           "1e9", "0x10", "", "abc"]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("odd")
    (d / "binary").write_bytes(bytes(range(256)) * 8)
    (d / "latin1").write_bytes(b"name: \xe9t\xe9\n\xff\xfe")
    (d / "empty").write_bytes(b"")
    os.mkfifo(d / "fifo")
    (d / "dir").mkdir()
    (d / "link").symlink_to(d / "binary")
    (d / "dangling").symlink_to(d / "nowhere")
    return {"binary": str(d / "binary"), "latin1": str(d / "latin1"), "empty": str(d / "empty"),
            "fifo": str(d / "fifo"), "dir": str(d / "dir"), "missing-parent": str(d / "no" / "such" / "f"),
            "link": str(d / "link"), "dangling": str(d / "dangling"), "zero": "/dev/zero"}


def value(files: dict[str, str]) -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(NUMBERS), st.sampled_from(sorted(files.values())),
                     st.text(alphabet="abc01:@/.-=,", max_size=8))


def run(argv: list[str], tmp: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ETHLAB_STATE_DIR": str(tmp / "state"), "ETHLAB_RUNS_DIR": str(tmp / "runs"),
           "COLUMNS": "400", "XDG_RUNTIME_DIR": str(tmp / "xdg")}
    try:
        return subprocess.run([sys.executable, "-m", *argv], capture_output=True, text=True, timeout=HANG_S,
                              stdin=subprocess.DEVNULL, cwd=tmp, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail(f"hung over {HANG_S} s: {argv}")


def check(done: subprocess.CompletedProcess[str], argv: list[str]) -> None:
    text = done.stdout + done.stderr
    assert "Traceback" not in text, (argv, text)
    if done.returncode == 0:
        return
    # argparse's usage block (a `usage:` line and its indented continuation) comes before the error line
    lines = [ln for ln in done.stderr.splitlines() if ln.strip() and not ln.startswith(("usage:", " "))]
    assert len(lines) == 1, (argv, done.stderr)


def ethlab_argv(draw: st.DrawFn, files: dict[str, str]) -> list[str]:
    v = value(files)
    which = draw(st.sampled_from(["run", "traffic", "up", "topo-show", "topo-yaml", "compare", "report", "clean",
                                  "down", "doctor"]))
    if which == "run":
        return ["run", draw(v), "--out", draw(v), *draw(st.sampled_from([[], ["--repetitions", draw(v)],
                                                                        ["--seed", draw(v)]])), "--dry-run"]
    if which == "traffic":
        return ["traffic", "run", "all_reduce", "--topo", draw(st.sampled_from(["line", draw(v)])),
                draw(st.sampled_from(["--size", "--rate-mbps", "--time-limit", "--trace", "--mtu"])), draw(v),
                "--out", draw(v), "--dry-run"]
    if which == "up":
        return ["up", draw(st.sampled_from(["line", draw(v)])),
                draw(st.sampled_from(["--rate-gbps", "--rate-scale", "--sample", "--program", "--n"])), draw(v),
                "--dry-run"]
    if which in ("topo-show", "topo-yaml"):
        flag = "--png" if which == "topo-show" else "--yaml"
        return ["topo", "show", draw(st.sampled_from(["line", draw(v)])), flag, draw(v)]
    if which == "compare":
        return ["compare", draw(v), draw(v), "--tolerance", draw(v)]
    if which == "report":
        return ["report", draw(v)]
    if which == "clean":
        return ["clean", *draw(st.sampled_from([["--run", draw(v)], ["--list"], ["--all"]]))]
    return [which]


def p4exec_argv(draw: st.DrawFn, files: dict[str, str]) -> list[str]:
    v = value(files)
    which = draw(st.sampled_from(["compile", "stf", "switch", "queue"]))
    if which == "compile":
        return ["p4exec.cli", "compile", draw(v), *draw(st.sampled_from([[], ["-o", draw(v)],
                                                                         ["--p4runtime-files", draw(v)]]))]
    if which == "stf":
        return ["p4exec.cli", "stf", draw(v), draw(v), *draw(st.sampled_from([[], ["--seed", draw(v)]]))]
    if which == "queue":
        return ["p4exec.cli", "queue", draw(v), draw(st.sampled_from(["--rate", "--depth", "--device-id",
                                                                      "--grpc-server-addr", "--timeout"])),
                draw(v)]
    flag = draw(st.sampled_from(["--device-id", "--cpu-port", "--queue-depth", "--queue-rate", "--priority-queues",
                                 "--rx-ring-mb", "--log-file", "--stats-file", "--grpc-server-addr", "-i",
                                 "--queue-rate-port", "--state-budget-mb", "--seed", "--pcap"]))
    return ["p4exec.switch", draw(st.sampled_from([draw(v), "--no-p4"])), "--no-grpc", flag, draw(v)]


def _until_ready(proc: subprocess.Popen[str]) -> str:
    """A switch's stderr until it says it is ready (valid flags: it then runs until stopped) or exits."""
    assert proc.stderr is not None
    # the pipe's fd, not the text wrapper: readline() may pull the ready line into the wrapper's buffer along
    # with an earlier one (a log line a few ms before it), and select() on the fd then waits for ever
    fd = proc.stderr.fileno()
    deadline = time.monotonic() + HANG_S
    err = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        chunk = os.read(fd, 65536)
        err += chunk
        if not chunk or b"ready" in err:
            if not chunk:
                proc.wait(10)
            return err.decode(errors="replace")
    pytest.fail(f"neither ready nor exited within {HANG_S} s: {proc.args}")


@settings(max_examples=60, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_ethlab_subcommands_refuse_generated_input_cleanly(files: dict[str, str], tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str],
                                                           data: st.DataObject) -> None:
    """In-process (an ethlab interpreter starts in ~4 s here; `main(argv)` is what the script runs), with an
    alarm as the hang guard; the subprocess cases below cover the real process boundary."""
    from ethlab.cli import main

    monkeypatch.setenv("ETHLAB_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("ETHLAB_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("COLUMNS", "400")
    monkeypatch.chdir(tmp_path)
    argv = data.draw(st.composite(lambda draw: ethlab_argv(draw, files))())
    check(run_main(main, argv, capsys, HANG_S), argv)


@pytest.mark.parametrize("argv,kind", [(["report", "FILE"], "fifo"), (["run", "FILE", "--dry-run"], "binary"),
                                       (["compare", "FILE", "FILE"], "dangling"), (["topo", "show", "FILE"], "zero"),
                                       (["up", "FILE", "--dry-run"], "fifo"),
                                       (["topo", "show", "line", "--yaml", "FILE"], "fifo")])
def test_ethlab_as_a_process_on_odd_files(files: dict[str, str], tmp_path: Path, argv: list[str],
                                          kind: str) -> None:
    argv = [files[kind] if a == "FILE" else a for a in argv]
    done = run(["ethlab.cli", *argv], tmp_path)
    assert done.returncode != 0
    check(done, argv)


def test_switch_pcap_into_a_file_is_an_error_line(files: dict[str, str], tmp_path: Path) -> None:
    """`--pcap` names a directory; a device or FIFO there was a traceback from mkdir (found by the fuzz below)."""
    argv = ["p4exec.switch", "--no-p4", "--no-grpc", "--pcap", files["zero"]]
    done = run(argv, tmp_path)
    assert done.returncode == 2
    assert "--pcap /dev/zero" in done.stderr
    check(done, argv)


@settings(max_examples=15, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_p4exec_subcommands_refuse_generated_input_cleanly(files: dict[str, str], tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str],
                                                           data: st.DataObject) -> None:
    """`compile`, `stf` and `queue` in-process (their `main(argv)`, alarm-bounded: tests/support/cli.py); the
    switch as a process, since valid flags start a switch that runs until stopped. The process boundary of
    the other commands is covered by tests/p4exec/test_cli_inputs.py::test_each_command_refuses_as_a_process."""
    from p4exec.cli import main

    argv = data.draw(st.composite(lambda draw: p4exec_argv(draw, files))())
    if argv[0] == "p4exec.switch":
        # valid flags start a switch that runs until stopped: bound it by its ready line (always on stderr)
        proc = subprocess.Popen([sys.executable, "-m", *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True, cwd=tmp_path, stdin=subprocess.DEVNULL)
        try:
            err = _until_ready(proc)
        finally:
            if proc.poll() is None:
                proc.terminate()
                proc.wait(10)
        if "ready" not in err:
            check(subprocess.CompletedProcess(argv, proc.returncode, "", err), argv)
        return
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "400")
    check(run_main(main, argv[1:], capsys, HANG_S), argv)
