"""A switch port's burst send (SocketPort.send_burst: sendmmsg from C, p4exec/native/burstio.py, or frame by
frame from Python where no C compiler is) on real veths in the lab's namespaces: every frame arrives in order and
unchanged, a frame the kernel refuses is reported and counted without stopping the rest, and a data plane's
queued frames are counted (forwarded, transmitted, tx_error) exactly as lone sends are."""

from __future__ import annotations

import errno
import subprocess
from pathlib import Path

import pytest

from p4exec.native.build import compiler_available
from p4exec.switch import ports as ports_mod
from p4exec.switch.dataplane import DataPlane
from p4exec.switch.lab import Lab, switch_env
from p4exec.switch.nsio import read_frames
from p4exec.switch.ports import SocketPort
from p4exec.switch.tm import TrafficManager

PATHS = ["c", "python"]


@pytest.fixture(params=PATHS)
def path(request, monkeypatch) -> str:
    """Each test once through C's sendmmsg and once through the Python path (as without a C compiler)."""
    if request.param == "c":
        if compiler_available() is None:
            pytest.skip("no C compiler on this machine")
        monkeypatch.setattr(ports_mod, "_BURST", [])
        assert ports_mod.burst_sender() is not None
    else:
        monkeypatch.setattr(ports_mod, "_BURST", [None])
    return request.param


def _frames(n: int, big_at: tuple[int, ...] = ()) -> list[bytes]:
    """Distinct frames of many sizes, numbered; a 4000-byte frame (past the veth's 1500 MTU) at `big_at`."""
    out = []
    for i in range(n):
        size = 4000 if i in big_at else 60 + (i * 131) % 1455
        head = b"\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x88\xb5" + i.to_bytes(4, "big")
        out.append(head + bytes((i * 7 + k) & 0xFF for k in range(size - len(head))))
    return out


class Capture:
    """nsio recv in host 1's namespace (the veth peer of the switch side `sw_if(1)`)."""

    def __init__(self, lab: Lab, tmp: Path, count: int) -> None:
        self.out = tmp / "cap.bin"
        self.proc = subprocess.Popen(lab.nsio(1, "recv", lab.host_if(1), str(self.out), "--count", str(count),
                                              "--max-seconds", "20", "--idle", "1.0"),
                                     stdout=subprocess.PIPE, text=True, env=switch_env())
        assert self.proc.stdout is not None
        assert self.proc.stdout.readline().strip() == "ready"

    def frames(self) -> list[bytes]:
        self.proc.communicate(timeout=60)
        return read_frames(str(self.out))


def test_burst_arrives_in_order_unchanged(lab: Lab, tmp_path: Path, path: str) -> None:
    frames = _frames(300)
    port = SocketPort(1, lab.sw_if(1))
    port.open()
    try:
        cap = Capture(lab, tmp_path, len(frames))
        assert port.send_burst(frames[:1]) == []
        assert port.send_burst(frames[1:]) == []  # more than one sendmmsg vector of 64
        got = cap.frames()
    finally:
        port.close()
    assert got == frames
    assert port.send_errors == {}


def test_a_refused_frame_is_reported_and_the_rest_still_go(lab: Lab, tmp_path: Path, path: str) -> None:
    frames = _frames(150, big_at=(0, 70, 149))
    port = SocketPort(1, lab.sw_if(1))
    port.open()
    try:
        cap = Capture(lab, tmp_path, len(frames) - 3)
        refused = port.send_burst(frames)
        got = cap.frames()
    finally:
        port.close()
    assert refused == [0, 70, 149]
    assert port.send_errors == {errno.EMSGSIZE: 3}
    assert got == [f for i, f in enumerate(frames) if i not in refused]


def test_queued_frames_count_as_lone_sends(lab: Lab, tmp_path: Path, path: str) -> None:
    """`DataPlane._forward_one` queues on an up data port; the batch's end sends: forwarded and transmitted for
    what left, tx_error for the refused frame, a lone send in between keeps the wire's order."""
    frames = _frames(100, big_at=(40,))
    dp = DataPlane([SocketPort(1, lab.sw_if(1)), SocketPort(2, lab.sw_if(2))], TrafficManager(), None, None)
    dp.open_ports()
    try:
        dp.ports[1].up = True
        cap = Capture(lab, tmp_path, len(frames) - 1)
        ps = dp.acct.received(2, 64)
        for fr in frames[:60]:
            dp._forward_one(ps, 1, fr, 0.0)
        assert dp.acct.snapshot()["ports"]["2"]["forwarded"] == 0  # queued, not yet counted
        assert dp._senders[1].send(frames[60], 0.0)  # a lone send: the queued frames go first
        for fr in frames[61:]:
            dp._forward_one(ps, 1, fr, 0.0)
        dp.flush_out()
        got = cap.frames()
        snap = dp.acct.snapshot()
    finally:
        dp.close()
    assert got == frames[:40] + frames[41:]
    p2, p1 = snap["ports"]["2"], snap["ports"]["1"]
    assert p2["forwarded"] == 98 and p2["dropped_by_reason"]["tx_error"] == 1  # the lone send counts itself
    assert p1["transmitted"] == 99 and p1["transmitted_bytes"] == sum(map(len, got))
