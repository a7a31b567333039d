"""A switch port's burst send (SocketPort.send_burst: sendmmsg from C, p4exec/native/burstio.py, or frame by
frame from Python where no C compiler is) on real veths in the lab's namespaces: every frame arrives in order and
unchanged, a frame the kernel refuses is reported and counted without stopping the rest, and a data plane's
queued frames are counted (forwarded, transmitted, tx_error) exactly as lone sends are."""

from __future__ import annotations

import errno
import subprocess
import time
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


@pytest.mark.netns
@pytest.mark.parametrize("kind", ["native", "python-without-a-compiler"])
def test_a_switch_burst_forwards_and_counts_every_frame(lab: Lab, start_switch, capture, send, tmp_path: Path,
                                                        monkeypatch, kind: str, routed_basic_l3) -> None:
    """A stopped switch finds a mixed burst in its ring when it goes on and reads it in bursts (native: C's
    batch and sendmmsg; without a C compiler: the Python pipeline, a frame at a time) and forwards, in
    order, exactly the routed frames; malformed and unrouted ones are counted and dropped."""
    import signal

    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether
    from scapy.packet import Raw

    if kind == "native":
        if compiler_available() is None:
            pytest.skip("no C compiler on this machine")
        extra = ["--pipeline", "native"]
    else:
        monkeypatch.setenv("CC", "/nonexistent/cc")
        monkeypatch.setenv("HOME", str(tmp_path))  # an empty cache: no earlier build to reuse
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
        extra = []
    sw = start_switch("--no-p4", "--log-level", "info", *extra)
    with routed_basic_l3(sw):
        good = [bytes(Ether(dst="00:00:00:00:00:aa", src="00:00:00:00:01:01")
                      / IP(src="10.0.1.1", dst="10.0.2.2", id=i) / UDP() / Raw(b"x" * (i % 50))) for i in range(60)]
        truncated = good[0][:14 + 8]  # IPv4 ethertype, 8 of the 20 header bytes: the parser fails
        no_route = bytes(Ether(dst="00:00:00:00:00:aa", src="00:00:00:00:01:01") / IP(dst="10.9.9.9") / UDP())
        frames: list[bytes] = []
        for part in range(3):
            frames += good[part * 20 : part * 20 + 20] + [truncated] * 5 + [no_route] * 5
        cap = capture(2, count=len(good), max_seconds=20, idle=2.0)
        sw.proc.signal(signal.SIGSTOP)  # the frames wait in the ring: the switch reads them in bursts
        try:
            assert send(1, frames) == len(frames)
        finally:
            sw.proc.signal(signal.SIGCONT)
        got, _ = cap.result()
        time.sleep(0.3)
    assert sw.stop()
    assert [Ether(raw)[IP].id for raw in got] == list(range(60))  # every routed frame, in order
    p1, p2 = sw.stats()["ports"]["1"], sw.stats()["ports"]["2"]
    assert p1["received"] == 90 and p1["forwarded"] == 60, p1
    assert p1["dropped_by_reason"]["malformed"] == 15 and p1["dropped_by_reason"]["pipeline"] == 15, p1
    assert p2["transmitted"] == 60 and p2["transmitted_bytes"] == sum(map(len, got))
    log = sw.proc.output()
    assert ("sendmmsg (C)" if kind == "native" else "frame by frame (Python)") in log, log[-2000:]


def test_ring_bursts_read_every_frame_as_sent(lab: Lab, tmp_path: Path, path: str) -> None:
    """A port's receive ring read in bursts (C's ring_take, or Python frame by frame): every frame in order, VLAN
    tags put back where the kernel took them out, our own transmissions not read back; more frames than one
    read takes, and than the ring's slots (it wraps)."""
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Dot1Q, Ether
    from scapy.packet import Raw

    from p4exec.switch.nsio import write_frames

    frames = _frames(200)
    frames[5] = bytes(Ether(dst="00:00:00:00:00:02") / Dot1Q(vlan=42, prio=5) / IP() / UDP() / Raw(b"v" * 30))
    frames[6] = bytes(Ether(dst="00:00:00:00:00:02") / Dot1Q(vlan=0) / IP() / UDP())  # priority-tagged
    port = SocketPort(1, lab.sw_if(1), ring_bytes=1 << 20)  # the smallest ring: 512 slots of 2 KiB
    port.open()
    got: list[bytes] = []
    try:
        assert port.send_burst([frames[0][:60]]) == []  # our own: filtered
        src = tmp_path / "in.bin"
        for _round in range(4):  # 800 frames through 512 slots
            write_frames(str(src), frames)
            subprocess.run(lab.nsio(1, "send", lab.host_if(1), str(src)), check=True, capture_output=True,
                           env=switch_env(), timeout=60)
            want = len(got) + len(frames)
            end = time.monotonic() + 10
            while len(got) < want and time.monotonic() < end:
                burst = port.recv_batch(64)
                assert len(burst) <= 64
                got += burst
                if not burst:
                    time.sleep(0.01)
        assert port.take_drops() == 0
    finally:
        port.close()
    assert got == frames * 4
