"""DATAPLANE_ATOMIC batches on a running `p4exec switch`: packets never see half a batch.

Each batch flips where frames go (MyIngress.route) *and* the destination MAC they carry
(MyIngress.mark), with a few hundred unrelated modifies between the two flips. Frames from
h1 flow the whole time; a frame at h2 with h3's MAC (or the reverse) saw a mix of old and new.
"""

from __future__ import annotations

import subprocess
import time

import pytest
from p4.v1 import p4runtime_pb2 as pb
from scapy.all import Ether, Raw

from p4exec.switch.lab import switch_env
from p4exec.switch.nsio import write_frames
from tests.support.switch import ATOMIC_FLIP, Capture, Switch, compiled

pytestmark = pytest.mark.netns

MAC_OF_PORT = {2: 0x000000000202, 3: 0x000000000303}
FILLERS = 300
FRAMES = 4000
RATE_PPS = 2000


def flip_batch(conn, port: int, serial: int) -> list[pb.Update]:
    """port flip, ballast, MAC flip: one all-or-nothing batch."""
    route = conn.table_entry("MyIngress.route", default=True, action="MyIngress.set_port", params={"port": port})
    mark = conn.table_entry("MyIngress.mark", default=True, action="MyIngress.set_dst",
                            params={"mac": MAC_OF_PORT[port]})
    ballast = [conn.table_entry("MyIngress.filler", {"hdr.ethernet.srcAddr": i + 1}, "MyIngress.set_dst",
                                {"mac": serial}) for i in range(FILLERS)]
    return [pb.Update(type=pb.Update.MODIFY, entity=pb.Entity(table_entry=e)) for e in (route, *ballast, mark)]


def test_dataplane_atomic_batches_are_never_seen_half_done(lab3, tmp_path) -> None:
    lab = lab3
    sw = Switch(lab, tmp_path, "--no-p4")
    p4info, config = compiled(ATOMIC_FLIP)
    conn = sw.connect(p4info)
    try:
        conn.set_pipeline(device_config=config)
        conn.insert(*(conn.table_entry("MyIngress.filler", {"hdr.ethernet.srcAddr": i + 1}, "MyIngress.set_dst",
                                       {"mac": 0}) for i in range(FILLERS)))
        conn.stub.Write(atomic(conn, flip_batch(conn, 2, 0)), timeout=60)

        frames = [bytes(Ether(dst="00:00:00:00:00:aa", src="00:00:00:00:01:01", type=0x88B5) / Raw(b"%06d" % i))
                  for i in range(FRAMES)]
        path = tmp_path / "tx.bin"
        write_frames(str(path), frames)
        caps = {h: Capture(lab, h, tmp_path, count=0, max_seconds=FRAMES / RATE_PPS + 30, idle=3.0) for h in (2, 3)}
        sender = subprocess.Popen(lab.nsio(1, "send", lab.host_if(1), str(path), "--rate", str(RATE_PPS)),
                                  stdout=subprocess.PIPE, text=True, env=switch_env())
        flips = 0
        deadline = time.monotonic() + FRAMES / RATE_PPS + 60  # bounded even if the sender hangs
        while sender.poll() is None and time.monotonic() < deadline:
            port = 3 if flips % 2 == 0 else 2
            conn.stub.Write(atomic(conn, flip_batch(conn, port, flips + 1)), timeout=60)
            flips += 1
        out, _ = sender.communicate(timeout=60)
        assert int(out.split()[1]) == FRAMES
        got = {h: cap.result(timeout=90)[0] for h, cap in caps.items()}
    finally:
        conn.close()

    assert flips >= 4, f"only {flips} batches while the traffic flowed"
    for host, rx in got.items():
        assert rx, f"no frame reached h{host}"
        macs = {int.from_bytes(f[:6], "big") for f in rx}
        assert macs == {MAC_OF_PORT[host]}, (
            f"h{host} got frames with MACs {sorted(hex(m) for m in macs)}: a packet saw half a batch")
    assert sum(len(rx) for rx in got.values()) <= FRAMES
    assert sw.stop()


def atomic(conn, updates: list[pb.Update]) -> pb.WriteRequest:
    req = pb.WriteRequest(device_id=1, atomicity=pb.WriteRequest.DATAPLANE_ATOMIC, updates=updates)
    req.election_id.low = conn.election_id & ((1 << 64) - 1)
    req.election_id.high = conn.election_id >> 64
    return req
