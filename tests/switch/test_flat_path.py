"""`SwitchLoop.ingress`'s flat path (one copy for a port that is up: the traffic manager's shortcut, egress and
one frame out in the same call) leaves exactly what the general path (`_admit` → `_admit_copy` → `_egress` →
`_send_out`) leaves: the frames on the wire in order with the same queueing metadata, the per-port counters
and drop reasons, the traffic manager's queues, pacing and departures, the timers. A scripted pipeline drives
every branch: an idle port, a paced port that is busy (queued, then served), a full queue, a down port, a port
the switch does not have, the CPU port, egress raising, egress dropping and egress making two frames."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from p4exec.switch.dataplane import DataPlane
from p4exec.switch.ports import SocketPort
from p4exec.switch.program import Live
from p4exec.switch.stats import MALFORMED
from p4exec.switch.tm import ManualClock, QueueConfig, TrafficManager

CPU = 255


@dataclass
class Job:
    egress_port: int
    priority: int
    packet_length: int
    frame: bytes


class ScriptedPipeline:
    """frame[0]: the egress port (0: ingress drops it, 9: ingress raises); frame[1]: what egress does (0 one frame,
    1 raise, 2 drop, 3 two frames, the second to port 1). Egress writes the queueing metadata into its output."""

    last_malformed = False

    def ingress(self, port: int, frame: bytes, now_us: int) -> list[Job]:
        if frame[0] == 9:
            raise ValueError("bad frame")
        return [] if frame[0] == 0 else [Job(frame[0], frame[2] % 2, len(frame), frame)]

    def egress(self, job: Job, now_us: int, qinfo: Any) -> list[tuple[int, bytes]]:
        how = job.frame[1]
        if how == 1:
            raise ValueError("egress fault")
        if how == 2:
            return []
        out = job.frame + repr((now_us, qinfo)).encode()
        return [(job.egress_port, out)] + ([(1, out)] if how == 3 else [])


def plane(sent: list) -> tuple[DataPlane, ManualClock]:
    def recorder(n: int):
        def send(frame: bytes) -> bool:
            sent.append((n, frame))
            return True
        return send

    ports = [SocketPort(n, f"none{n}") for n in (1, 2, 3, 4)]
    for p in ports:
        p.send = recorder(p.num)  # type: ignore[method-assign]
    clock = ManualClock(1_000)
    dp = DataPlane(ports, TrafficManager(QueueConfig(depth=3), nqueues=2, clock=clock), CPU, None)
    dp.tm.configure(2, rate_pps=1e6)  # one frame per µs: frames a µs apart pass, a burst queues
    dp.ports[3].up = False
    pipe = ScriptedPipeline()
    live = Live(program=None)  # type: ignore[arg-type]
    live.ingress, live.egress = pipe.ingress, pipe.egress
    dp.packet_in_listeners.append(lambda frame: sent.append((CPU, frame)))
    dp.set_live(live)
    return dp, clock


def general(dp: DataPlane, port: int, frame: bytes, ctx: Any) -> None:
    """The general path of `SwitchLoop.ingress` for every packet (as it was before the flat path)."""
    assert dp._halves is not None
    ingress, egress, _malformed = dp._halves
    dp.executions += 1
    now = dp.tm.clock.now_ns()
    now_us = (now - dp.tm.start_ns) // 1000
    try:
        jobs = ingress(port, frame, now_us)
    except ValueError:
        dp._lost(ctx, MALFORMED)
        return
    if not jobs:
        dp._lost(ctx, "pipeline")
        return
    dp._admit(jobs, ctx, egress, now, now_us, port)
    dp.flush_out()


SCRIPT = [  # (ns to move the clock on, ingress port, frame)
    (0, 1, bytes([4, 0, 0]) * 20),      # idle unpaced port: straight out
    (0, 1, bytes([2, 0, 0]) * 20),      # idle paced port: straight out, paces the port
    (0, 1, bytes([2, 0, 1]) * 30),      # paced port busy: queued (priority 1)
    (0, 4, bytes([2, 0, 0]) * 25),      # queued behind it
    (0, 4, bytes([2, 0, 0]) * 25),      # queued
    (0, 4, bytes([2, 0, 0]) * 25),      # queued (priority 0's queue now full)
    (0, 4, bytes([2, 0, 0]) * 25),      # queue full: tail drop
    (0, 1, bytes([3, 0, 0]) * 20),      # port down
    (0, 1, bytes([7, 0, 0]) * 20),      # no such port
    (0, 1, bytes([CPU, 0, 0]) * 20),    # to the CPU
    (0, 1, bytes([4, 1, 0]) * 20),      # egress raises
    (0, 1, bytes([4, 2, 0]) * 20),      # egress drops
    (0, 2, bytes([4, 3, 0]) * 20),      # egress makes two frames
    (0, 1, bytes([0, 0, 0]) * 20),      # ingress drops
    (0, 1, bytes([9, 0, 0]) * 20),      # ingress raises
    (500, 1, bytes([2, 0, 0]) * 20),    # the paced port is still busy and its queue full: tail drop
    (10_000, 1, bytes([4, 0, 0]) * 20), # later: the queue has drained
    (0, 1, bytes([2, 0, 0]) * 20),      # the paced port is idle and free again: straight out
    (300, 1, bytes([2, 0, 0]) * 20),    # paced out for this ns: queued, served by the timer
]


def run(flat: bool) -> tuple[dict, list, dict, int]:
    sent: list = []
    dp, clock = plane(sent)
    for step, port, frame in SCRIPT:
        until = clock.now_ns() + step
        while clock.now_ns() < until:  # the timers run as the clock moves, 100 ns at a time
            clock.set(min(until, clock.now_ns() + 100))
            dp._run_timers()
        ctx = dp._received(port, frame)
        if flat:
            dp.ingress(port, frame, ctx)
        else:
            general(dp, port, frame, ctx)
    for _ in range(10):  # serve what is still queued
        clock.set(clock.now_ns() + 1_000)
        dp._run_timers()
    tm = {port: (pq.backlog, pq.drops, pq.max_depth, pq.departed_ns, pq.next_tx)
          for port, pq in sorted(dp.tm.ports.items())}
    snap = dp.acct.snapshot()
    dp.close()
    return snap, sent, tm, dp.executions


def test_flat_path_leaves_what_the_general_path_leaves() -> None:
    flat, gen = run(True), run(False)
    assert flat == gen
    snap, sent, tm, executions = flat
    assert executions == len(SCRIPT) and snap["in_flight"] == 0
    p1 = snap["ports"]["1"]["dropped_by_reason"]
    assert (p1["port_down"], p1["no_port"], p1["malformed"], p1["pipeline"], p1["queue_full"]) == (1, 1, 2, 2, 1)
    assert snap["ports"]["4"]["dropped_by_reason"]["queue_full"] == 1
    assert tm[2][:3] == (0, 2, 4)  # drained; two tail drops; four waited at once
    # the queued copies left with the time they waited and the depth behind them; the rest waited not at all
    waited = [f for port, f in sent if port == 2 and b"deq_timedelta=0," not in f]
    assert len(waited) == 5 and b"deq_timedelta=4, deq_qdepth=0" in waited[3]
    assert sum(1 for port, _ in sent if port == 2) == 7 and sum(1 for port, _ in sent if port == CPU) == 1
