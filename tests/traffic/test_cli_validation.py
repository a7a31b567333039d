"""Bad input to the traffic command lines gets one clear line and a non-zero exit, before any namespace or
fabric comes up (issue 15, item 10, the traffic side); hypothesis throws argument soup at both commands."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import traffic.cli as cli
import traffic.vethlab as vethlab


class BringUp(Exception):
    """Raised instead of creating namespaces: reaching it means validation let the arguments through."""


@pytest.fixture(autouse=True)
def no_bring_up(monkeypatch):
    def refuse(*_a, **_k):
        raise BringUp()
    monkeypatch.setattr(vethlab.VethLab, "__init__", refuse)
    import ethlab.bringup
    monkeypatch.setattr(ethlab.bringup, "running_fabric", refuse)


BAD = [
    (["bogus"], "unknown pattern 'bogus'"),
    (["all_reduce", "--size", "lots"], "'lots' is not a size"),
    (["all_reduce", "--size", "0"], "at least 1 byte"),
    (["all_reduce", "--mtu", "10"], "MTU must be an integer from"),
    (["all_reduce", "--algorithm", "nope"], "has no algorithm 'nope'"),
    (["all_reduce", "--pattern-param", "slices=-3"], "slices must be >= 1"),
    (["all_reduce", "--param", "slices=x"], "bad parameter value"),
    (["all_reduce", "--iterations", "0"], "--iterations: must be > 0"),
    (["all_reduce", "--rate-mbps", "-5"], "--rate-mbps: must be > 0"),
    (["all_reduce", "--rate-mbps", "nan"], "--rate-mbps: must be > 0"),
    (["all_reduce", "--transport", "tcp"], "invalid choice: 'tcp'"),
    (["all_reduce", "--transport", "rc-gbn", "--transport-param", "rto_s=-1"], "must be a non-negative"),
    (["all_reduce", "--transport", "rc-gbn", "--transport-param", "bogus=1"], "unknown transport parameter"),
    (["all_reduce", "--reaction", "dcqcn", "--reaction-param", "zz=1"], "takes the parameters"),
    (["all_reduce", "--transport-param", "rto_s=1"], "needs --transport rc-gbn or sr"),
]


def _run(argv: list[str]) -> int:
    try:
        return cli.main(argv)
    except SystemExit as e:  # argparse's own errors
        return int(e.code or 0)


@pytest.mark.parametrize(("args", "message"), BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_one_line_before_bring_up(capsys, args: list[str], message: str) -> None:
    rc = _run(["lab", *args])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc != 0
    assert message in err[-1] and "Traceback" not in "\n".join(err)


TRANSPORT_BAD = [
    ["--transport", "tcp"],
    ["--transport", "rc-gbn", "--transport-param", "rto_s=-1"],
    ["--transport", "rc-gbn", "--transport-param", "bogus=1"],
    ["--transport-param", "rto_s=1"],
    ["--plane-policy", "random"],
]


@pytest.mark.parametrize("args", TRANSPORT_BAD, ids=[" ".join(a) for a in TRANSPORT_BAD])
def test_ethlab_traffic_run_refuses_bad_transport_flags(capsys, tmp_path, args: list[str]) -> None:
    """The fabric command (`ethlab traffic run`) takes the same transport flags and checks them first."""
    from ethlab.cli import main as ethlab_main

    try:
        rc = ethlab_main(["traffic", "run", "all_reduce", "--topo", "leafspine", "--out", str(tmp_path), *args])
    except SystemExit as e:
        rc = int(e.code or 0)
    err = capsys.readouterr().err.strip().splitlines()
    assert rc != 0 and err and "Traceback" not in "\n".join(err)
    assert len(err[-1]) < 300 and ("transport" in err[-1] or "plane-policy" in err[-1])


def test_good_input_reaches_bring_up() -> None:
    with pytest.raises(BringUp):
        cli.main(["lab", "all_reduce", "--transport", "sr", "--plane-policy", "round-robin", "--size", "1MiB"])


WORDS = ["all_reduce", "incast", "bogus", "--size", "1KiB", "lots", "0", "-1", "--mtu", "10", "1500", "9000",
         "--iterations", "2", "--rate-mbps", "nan", "inf", "--algorithm", "ring", "tree", "x", "--param",
         "slices=2", "slices=-3", "k", "=", "--transport", "rc-gbn", "sr", "none", "--transport-param",
         "rto_s=0.01", "window=0", "--plane-policy", "least-loaded", "--gap", "-0.5", "--reaction", "dcqcn",
         "--reaction-param", "g=2", "--time-limit", "--max-packets", "1e3", "--format", "ethplus", "--loss-grace"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=st.sampled_from(["lab", "fabric"]), words=st.lists(st.sampled_from(WORDS), max_size=8))
def test_argument_soup_never_tracebacks(capsys, command: str, words: list[str]) -> None:
    extra = ["--topo", "leafspine"] if command == "fabric" else []
    try:
        rc = _run([command, *words, *extra])
    except BringUp:
        return  # valid arguments: the lab/fabric would have come up now
    out = capsys.readouterr()
    assert rc != 0 and "Traceback" not in out.err
    assert out.err.strip(), "a refusal must say why"
