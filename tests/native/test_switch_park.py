"""Copies that wait in the traffic manager stay parked in C with the native pipeline (p4exec/switch/batch.py's
gate 3: the queue holds a slot, `egress_parked` runs egress when it leaves). Against the Python pipeline on the same
switch loop and traffic manager: the queueing metadata egress sees (enq_timestamp, enq_qdepth, deq_timedelta,
deq_qdepth), strict priority across queues, tail drops of a full queue, an egress drop, a port that goes down
with copies queued (flushed) and comes back, frames alone and same-instant batches. Equal: every frame on the wire
with its start, the drop reasons, the pipeline's counts; and no parked slot is left behind."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from p4exec.compiler.program import compile_file
from p4exec.device.program import Program
from p4exec.native.build import compiler_available
from p4exec.switch.program import make_live
from p4exec.switch.tm import QueueConfig
from p4exec.v1model.loader import load
from tests.support.wire import Wire
from vfabric.events import Simulator
from vfabric.switch import VirtualSwitch

pytestmark = pytest.mark.skipif(compiler_available() is None, reason="no C compiler on this machine")

# egress writes the queueing metadata it was given into the frame; priority 7 is dropped in egress
QUEUE_P4 = """
#include <core.p4>
#include <v1model.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> etype; }
header q_t { bit<32> enq_ts; bit<32> enq_qd; bit<32> deq_td; bit<32> deq_qd; bit<8> prio; bit<8> port; }
struct H { eth_t eth; q_t q; }
struct M { }
parser P(packet_in pkt, out H h, inout M m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.eth); pkt.extract(h.q); transition accept; }
}
control V(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    apply { sm.egress_spec = (bit<9>)h.q.port; sm.priority = h.q.prio[2:0]; }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) {
    apply {
        h.q.enq_ts = sm.enq_timestamp;
        h.q.enq_qd = (bit<32>)sm.enq_qdepth;
        h.q.deq_td = sm.deq_timedelta;
        h.q.deq_qd = (bit<32>)sm.deq_qdepth;
        if (h.q.prio == 7) { mark_to_drop(sm); }
    }
}
control C(inout H h, inout M m) { apply { } }
control D(packet_out pkt, in H h) { apply { pkt.emit(h.eth); pkt.emit(h.q); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""



def frame(k: int, port: int, prio: int, size: int) -> bytes:
    head = bytes(6) + k.to_bytes(6, "big") + b"\x88\xb5" + bytes(16) + bytes([prio, port])
    return head + bytes(size - len(head))


def drive(path: Path, kind: str) -> tuple[list, dict, dict, Any]:
    lp = load(compile_file(str(path)), seed=1, pipeline=kind)
    sim = Simulator()
    vs = VirtualSwitch(sim, "s", 1, QueueConfig(depth=3), nqueues=4)
    log: list = []
    for p in range(4):  # port 1 slow: copies for it queue (and overflow); the others take them at once
        vs.attach(p, Wire(p, log, 1e9 if p == 1 else 400e9))  # type: ignore[arg-type]
    vs.set_live(make_live(Program(lp.p4info, b"", lp.state, lp)))
    k = 0
    for step in range(120):
        t = step * 2000
        n = 1 + step % 4  # frames alone and in same-instant batches
        chunk = []
        for j in range(n):
            k += 1
            out = 1 if (k + j) % 3 else 2 + k % 2
            chunk.append((0 if j % 2 else 3, frame(k, out, (k * 5 + j) % 8, 64 + 37 * (k % 30)), None))
        if n == 1:
            sim.at(t, vs.ingress, *chunk[0])
        else:
            sim.at(t, vs.ingress_batch, chunk)
    sim.at(90_000, vs.set_port_up, 1, False)   # copies queued for port 1 are flushed
    sim.at(130_000, vs.set_port_up, 1, True)
    sim.run()
    stats = {k: v for k, v in lp.pipeline.stats.items() if v}
    return log, dict(vs.drops), stats, lp.pipeline


def test_parked_copies_leave_as_python_jobs_do(tmp_path: Path) -> None:
    path = tmp_path / "queue_meta.p4"
    path.write_text(QUEUE_P4)
    py_log, py_drops, py_stats, _ = drive(path, "python")
    nat_log, nat_drops, nat_stats, pipe = drive(path, "native")
    assert type(pipe).__name__ == "NativePipeline"
    # the case is what it means to be: queues on port 1 with depth, tail drops, flushed copies, egress drops
    assert py_drops["queue_full"] > 10 and py_drops["port_down"] > 0
    assert py_stats.get("dropped", 0) > 0
    deep = [f for p, f, _t in py_log if p == 1 and int.from_bytes(f[14 + 4:14 + 8], "big") > 0]
    assert len(deep) > 10  # copies that found others queued ahead of them
    assert nat_log == py_log
    assert nat_drops == py_drops
    assert nat_stats == py_stats
    assert pipe.parked() == 0  # every parked copy left, was dropped or flushed: no slot kept
