"""The benchmark's ring sender and ring counter (p4exec/switch/nsio.py `--ring`) on real veths: every frame
leaves in order and unchanged, pacing and counting agree with a plain socket on the other end."""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

from p4exec.switch.lab import Lab, switch_env
from p4exec.switch.nsio import write_frames

ETH_P_ALL = 3


def _listener(iface: str) -> socket.socket:
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((iface, ETH_P_ALL))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.settimeout(0.5)
    return s


def _frames(n: int) -> list[bytes]:
    """Distinct frames of many sizes (60 .. 1514 B), numbered in their payload."""
    out = []
    for i in range(n):
        size = 60 + (i * 97) % 1455
        head = b"\x02\x00\x00\x00\x00\x02" + b"\x02\x00\x00\x00\x00\x01" + b"\x88\xb5" + i.to_bytes(4, "big")
        out.append(head + bytes((i + k) & 0xFF for k in range(size - len(head))))
    return out


def _drain(s: socket.socket, want: int, seconds: float = 10.0) -> list[bytes]:
    got: list[bytes] = []
    end = time.monotonic() + seconds
    while len(got) < want and time.monotonic() < end:
        try:
            data, addr = s.recvfrom(65536)
        except TimeoutError:
            continue
        if addr[2] != 4:  # PACKET_OUTGOING
            got.append(data)
    return got


def test_ring_sender_sends_every_frame_in_order_unchanged(lab: Lab, tmp_path: Path) -> None:
    frames = _frames(300)
    path = tmp_path / "frames.bin"
    write_frames(str(path), frames)
    rx = _listener(lab.sw_if(1))
    try:
        out = subprocess.run(lab.nsio(1, "send", lab.host_if(1), str(path), "--ring", "--repeat", "20"),
                             capture_output=True, text=True, env=switch_env(), timeout=120, check=True)
        assert int(out.stdout.split()[1]) == 6000  # more frames than the ring has slots: it wraps
        got = _drain(rx, 6000)
    finally:
        rx.close()
    assert got == frames * 20


def test_ring_sender_paces_and_stops_at_max_seconds(lab: Lab, tmp_path: Path) -> None:
    fr = _frames(1)[0]
    path = tmp_path / "frames.bin"
    write_frames(str(path), [fr])
    rx = _listener(lab.sw_if(1))
    try:
        out = subprocess.run(lab.nsio(1, "send", lab.host_if(1), str(path), "--ring", "--repeat", "1000000",
                                      "--rate", "5000", "--max-seconds", "0.4"),
                             capture_output=True, text=True, env=switch_env(), timeout=120, check=True)
        _, sent, elapsed = out.stdout.split()
        got = _drain(rx, int(sent), seconds=5.0)
    finally:
        rx.close()
    assert 0 < int(sent) <= 5000 * float(elapsed) + 10  # never ahead of the rate
    assert float(elapsed) < 5.0  # the bound held, not the million frames
    assert len(got) == int(sent) and set(got) == {fr}


def test_ring_counter_counts_what_arrives(lab: Lab, tmp_path: Path) -> None:
    frames = _frames(50)
    rx = subprocess.Popen(lab.nsio(2, "recv", lab.host_if(2), str(tmp_path / "out.bin"), "--ring", "--discard",
                                   "--count", "5000", "--max-seconds", "30", "--idle", "1.0"),
                          stdout=subprocess.PIPE, text=True, env=switch_env())
    assert rx.stdout is not None
    assert rx.stdout.readline().strip() == "ready"
    tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
    try:
        tx.bind((lab.sw_if(2), 0))
        for _ in range(100):
            for fr in frames:
                tx.send(fr)
            time.sleep(0.001)  # about 50 ms of arrivals in all: the span is measured, not zero
    finally:
        tx.close()
    out, _ = rx.communicate(timeout=60)
    _, got, span = out.split()
    assert int(got) == 5000
    assert 0.0 < float(span) < 30.0


def test_ring_counter_refuses_to_keep_frames(lab: Lab, tmp_path: Path) -> None:
    out = subprocess.run(lab.nsio(2, "recv", lab.host_if(2), str(tmp_path / "out.bin"), "--ring",
                                  "--max-seconds", "0.1"),
                         capture_output=True, text=True, env=switch_env(), timeout=60)
    assert out.returncode != 0 and "--discard" in out.stderr and "Traceback" not in out.stderr
