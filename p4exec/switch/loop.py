"""The switch loop, written once for both clocks: a frame in on a port → ingress → traffic manager →
egress → frames out, with the drop reasons of `stats.py`.

`p4exec switch` (`DataPlane`: AF_PACKET ports, epoll, threads) and vfabric's simulated switch
(`VirtualSwitch`: channels, the simulator) both run this class. Each supplies only what depends on its clock
or its I/O: a `Timer` on its clock (the traffic manager reads the same clock), the ports out, which ports are
up, and where its counters go (the `_lost`/`_dropped`/`_copy_done` hooks: per ingress port and per packet in
the emulated switch, one flat tally in vfabric).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, Protocol, cast

from linklayer import LinkLayerConfig, LinkPort
from linklayer.attach import on_link_port
from linklayer.flow import FlowStats, PortFlow
from p4exec.switch.batch import run_batch, run_one
from p4exec.switch.program import Live
from p4exec.switch.stats import MALFORMED, NO_PORT, PIPELINE, PORT_DOWN, QUEUE_FULL, TX_ERROR
from p4exec.switch.tm import TrafficManager


class Timer(Protocol):
    """Calls `fn(*args)` at clock ns `t_ns` (the clock the traffic manager reads)."""

    def at(self, t_ns: int, fn: Callable[..., Any], *args: Any) -> Any: ...


class PortOut(Protocol):
    """Where a port's frames go: a frame that starts on the wire at `start_ns` (fractional clock ns).
    Returning False means the frame was refused (counted as tx_error); anything else means sent."""

    def send(self, frame: bytes, start_ns: float) -> Any: ...


class PortsUp(Protocol):
    """Port number -> carrier up (True), down (False), or no such port (None)."""

    def get(self, port: int, default: Any = None) -> bool | None: ...


class SwitchLoop:
    """Ingress, the traffic manager and egress of one switch; subclasses wire `out`, `up` and the hooks."""

    def __init__(self, tm: TrafficManager, timer: Timer, cpu_port: int | None, out: dict[int, Any], up: PortsUp,
                 min_frame: int = 0, wire_overhead: int = 0) -> None:
        self.tm = tm
        self.timer = timer
        self.cpu_port = cpu_port
        self.out = out  # port -> PortOut
        self.up_state = up
        self.live: Live | None = None
        self.stopped_loop = False
        self.executions = 0  # packets that entered the pipeline (one ingress pass; its egress halves follow)
        # bytes a packet holds its port for pacing: max(length, min_frame) + wire_overhead
        self.min_frame = min_frame
        self.wire_overhead = wire_overhead
        # (ingress, egress, malformed) of the live pipeline while the switch forwards, else None
        self._halves: tuple[Callable[..., Any], Callable[..., Any], Callable[[], bool]] | None = None
        self._one: Any = None  # the live pipeline's batch entry when `ingress` may hand it single frames (`run_one`)
        self._serving: set[int] = set()
        # ports whose state (queues, pacing, serving, carrier) changed since the batch path last judged what
        # they would do with a copy (p4exec/switch/batch.py); it judges only these and those paced out then.
        # A port being served is busy whatever happens to its queues: it counts as changed when service ends
        self._touched: set[int] = set()
        self.link_ports: dict[int, Any] = {}  # port -> linklayer.LinkPort (only with the link layer on)
        self.flow_config: LinkLayerConfig | None = None  # PFC/CBFC (`use_flow_control`); None: off
        self.flow: dict[int, PortFlow] = {}

    # ------------------------------------------------------------------ hooks (the side's bookkeeping)

    def _lost(self, ctx: Any, reason: str) -> None:
        """A packet dropped before it made any copy (ctx: what `ingress` was given)."""

    def _copies(self, ps: Any, copies: int) -> Any:
        """A packet made `copies` copies: the token that follows them (None: nothing to follow)."""
        return None

    def _dropped(self, fate: Any, reason: str) -> None:
        """A copy, or one frame of a copy's egress output, was dropped."""

    def _copy_done(self, fate: Any, fwd: int, cpu: int) -> None:
        """A copy finished: `fwd` frames left on data ports, `cpu` went to the CPU."""

    def _packet_in(self, frame: bytes) -> None:
        """A frame for the CPU port."""

    def _bad_packet(self, where: str, port: int, exc: Exception) -> None:
        """The pipeline raised on a packet (it is counted as malformed)."""

    # ------------------------------------------------------------------ control

    def set_live(self, live: Live | None) -> None:
        self.live = live
        self._forwarding()

    def _forwarding(self) -> None:
        """The one thing `ingress` asks first: the pipeline to run, or None (stopped, no program)."""
        live = self.live
        self._halves = (None if self.stopped_loop or live is None or live.ingress is None
                        else (live.ingress, live.egress, live.malformed))
        # a frame alone goes through the batch entry too (one call into C where it may leave at once), except
        # under flow control, whose per-copy ingress buffer the batch path's gates do not model
        self._one = (live.batch if self._halves is not None and live is not None and self.flow_config is None
                     else None)

    def attach_link(self, port: int, link_port: Any) -> None:
        """The link layer on `port` (linklayer/port.py, already this port's `out`): the frames it puts on the
        wire itself (shim bytes, replays, control frames) hold the port's pacing, so the queue, not the wire,
        absorbs them."""
        pq = self.tm.port(port)
        touched = self._touched

        def hold(end_ns: float) -> None:
            if end_ns > pq.next_tx:
                pq.next_tx = end_ns
                touched.add(port)

        link_port.hold = hold
        self.link_ports[port] = link_port

    # ------------------------------------------------------------------ link-level flow control (PFC, CBFC)

    def use_flow_control(self, cfg: LinkLayerConfig) -> None:
        """PFC or CBFC on the ports given to `attach_flow`: the traffic manager accounts its buffer by ingress port
        and priority, and a lossless priority is refused by its ingress buffer, never by a queue's depth."""
        self.flow_config = cfg
        self._forwarding()
        self.tm.use_buffers(tuple(cfg.flow_control == "cbfc" or p in cfg.pfc.priorities
                                  for p in range(self.tm.nqueues)))

    def attach_flow(self, port: int, link_port: LinkPort, rate_bps: float, mac: bytes) -> PortFlow | None:
        """Flow control on `port` through its link layer (after `attach_link`): the port's queues are served
        through the gate, its ingress buffer is the traffic manager's account for `port`, and a priority let go
        makes the loop serve the port again."""
        cfg = self.flow_config
        assert cfg is not None and self.tm.buffers is not None  # use_flow_control first
        pf = on_link_port(cfg, link_port, _LoopClock(self.tm.clock, self.timer), rate_bps, mac,
                          partial(self.kick, port))
        if pf is not None:
            self.flow[port] = pf
            self.tm.port(port).gate = pf.gate
            self.tm.buffers[port] = pf.rx
        return pf

    def flow_stats(self) -> dict[int, FlowStats]:
        """Per port: its flow-control counters (open pauses and credit stalls counted up to now)."""
        for pf in self.flow.values():
            pf.close()
        return {port: pf.stats for port, pf in sorted(self.flow.items())}

    def port_changed(self, port: int) -> None:
        """The side changed `port`'s carrier (what `up` says of it): the batch path judges the port again."""
        self._touched.add(port)

    def flush(self, port: int) -> int:
        """Drop everything queued for `port` (its carrier went down): how many copies."""
        self._touched.add(port)
        items = self.tm.flush_port(port)
        for item in items:
            job, egress, fate = item
            if type(job) is int:  # a copy the native pipeline keeps (p4exec/switch/batch.py): its slot is free
                egress.__self__.release_parked(job)
            self._dropped(fate, PORT_DOWN)
            self._copy_done(fate, 0, 0)
        return len(items)

    # ------------------------------------------------------------------ data path

    def ingress(self, port: int, frame: bytes, ctx: Any) -> None:
        """A frame has arrived on `port` (and passed any pipeline latency): ingress, then the queues."""
        one = self._one
        if one is not None:
            run_one(self, one, port, frame, ctx)
            return
        halves = self._halves
        if halves is None:
            self._lost(ctx, PIPELINE)
            return
        ingress, egress, malformed = halves
        self.executions += 1
        tm = self.tm
        now = tm.clock.now_ns()
        now_us = (now - tm.start_ns) // 1000
        try:
            jobs = ingress(port, frame, now_us)
        except Exception as exc:  # noqa: BLE001 - a bad frame must never stop the switch
            self._bad_packet("ingress", port, exc)
            self._lost(ctx, MALFORMED)
            return
        if not jobs:
            self._lost(ctx, MALFORMED if malformed() else PIPELINE)
            return
        if len(jobs) == 1:
            # the common case, flat: `_admit`, `_admit_copy` and `_egress` of one copy for an idle port that is
            # up, in this frame (Python calls are most of the switch's own cost per frame)
            job = jobs[0]
            eport = job.egress_port
            if self.up_state.get(eport):
                if eport not in self._serving:
                    self._touched.add(eport)
                    length = job.packet_length
                    min_frame = self.min_frame
                    qinfo = tm.pass_through(eport, job.priority,
                                            (length if length > min_frame else min_frame) + self.wire_overhead, now)
                    if qinfo is not None:
                        start = tm.ports[eport].departed_ns
                        try:
                            frames = egress(job, now_us, qinfo)
                        except Exception as exc:  # noqa: BLE001
                            self._egress_failed(job, self._copies(ctx, 1), exc)
                            return
                        if len(frames) == 1:  # one frame out: the side's one-step send (`_forward_one`)
                            oport, data = frames[0]
                            self._forward_one(ctx, oport, data, start)
                        elif frames:
                            self._send_out(frames, self._copies(ctx, 1), start)
                        else:
                            self._egress_dropped(self._copies(ctx, 1))
                        return
                # a busy port (being served, or paced out): the copy waits in the traffic manager
                self._admit_copy(job, eport, job.priority, job.packet_length, egress, self._copies(ctx, 1), now,
                                 now_us, port)
                return
        self._admit(jobs, ctx, egress, now, now_us, port)

    def ingress_batch(self, items: list[tuple[int, bytes, Any]]) -> None:
        """Frames (port, frame, ctx) that arrived in the same instant, in order: exactly `ingress` of each in
        turn; a pipeline with a batch entry (the native one) takes them in a few calls (p4exec/switch/batch.py)."""
        live = self.live
        # flow control decides per copy on the ingress buffer, which the batch path's gates do not model
        if (self._halves is not None and len(items) > 1 and live is not None and live.batch is not None
                and self.flow_config is None):
            run_batch(self, live.batch, items)
            return
        for port, frame, ctx in items:
            self.ingress(port, frame, ctx)

    def _admit(self, jobs: list[Any], ctx: Any, egress: Callable[..., Any], now: int, now_us: int,
               port: int) -> None:
        """The copies of one packet that came in on `port`, after ingress: each to `_admit_copy`."""
        fate = self._copies(ctx, len(jobs))
        for job in jobs:
            self._admit_copy(job, job.egress_port, job.priority, job.packet_length, egress, fate, now, now_us, port)

    def _admit_copy(self, job: Any, eport: int, priority: int, length: int, egress: Callable[..., Any], fate: Any,
                    now: int, now_us: int, port: int) -> bool:
        """One copy for `eport` (`egress(job, ...)` runs when it leaves): the traffic manager (which accounts it to
        `port`'s ingress buffer under flow control), or straight out of an idle port. False: it was dropped (its
        `job` will never reach `egress`)."""
        state = self.up_state.get(eport)  # True: up, False: down, None: no such port
        if not state and eport != self.cpu_port:
            self._dropped(fate, NO_PORT if state is None else PORT_DOWN)
            self._copy_done(fate, 0, 0)
            return False
        min_frame = self.min_frame
        wire = (length if length > min_frame else min_frame) + self.wire_overhead
        tm = self.tm
        serving = self._serving
        if eport not in serving:
            # (a served port stays what the batch path judged it, busy, whatever is queued: not touched)
            self._touched.add(eport)
            # an idle port: the packet leaves in this same instant if the port is free (no queue, no event)
            qinfo = tm.pass_through(eport, priority, wire, now)
            if qinfo is not None:
                self._egress(job, egress, fate, qinfo, tm.ports[eport].departed_ns, now_us)
                return True
        if not tm.enqueue(eport, priority, (job, egress, fate), wire, port, now):
            self._dropped(fate, QUEUE_FULL)
            self._copy_done(fate, 0, 0)
            return False
        if eport not in serving:
            serving.add(eport)
            ready = tm.ready_ns(eport, now)
            if ready is not None:
                self.timer.at(ready, self._serve, eport)
            else:
                serving.discard(eport)
        return True

    def kick(self, port: int) -> None:
        """Serve `port` again if it has something that may leave (flow control let a held priority go)."""
        if port in self._serving:
            return
        ready = self.tm.ready_ns(port)
        if ready is not None:
            self._touched.add(port)
            self._serving.add(port)
            self.timer.at(ready, self._serve, port)

    def _serve(self, port: int) -> None:
        """Dequeue the head of `port`, run egress on it and put the result on the wire, then wait for the
        port's next departure (one timer per queued packet)."""
        tm = self.tm
        now = tm.clock.now_ns()  # one reading for the departure and egress's timestamps
        got = tm.dequeue(port, now)
        if got is not None:
            item, qinfo = got
            job, egress, fate = cast("tuple[Any, Callable[..., Any], Any]", item)  # what `ingress` queued
            self._egress(job, egress, fate, qinfo, tm.ports[port].departed_ns, (now - tm.start_ns) // 1000)
        ready = tm.ready_ns(port, now)  # (the reading egress ran at: a paced port's own time decides)
        if ready is None:
            self._serving.discard(port)
            self._touched.add(port)  # no longer busy: the batch path judges it again
        else:
            self.timer.at(ready, self._serve, port)

    def _egress(self, job: Any, egress: Callable[..., Any], fate: Any, qinfo: Any, start: float,
                now_us: int) -> None:
        """Egress for a packet leaving its queue now (`now_us`, the switch's clock); its frames go on the wire
        at `start` (fractional clock ns)."""
        try:
            frames = egress(job, now_us, qinfo)
        except Exception as exc:  # noqa: BLE001
            self._egress_failed(job, fate, exc)
            return
        if len(frames) == 1:
            oport, data = frames[0]
            self._send_copy(fate, oport, data, start)
        elif frames:
            self._send_out(frames, fate, start)
        else:
            self._egress_dropped(fate)

    def _egress_failed(self, job: Any, fate: Any, exc: Exception) -> None:
        """Egress raised on a copy: it counts as malformed."""
        self._bad_packet("egress", job.egress_port, exc)
        self._dropped(fate, MALFORMED)
        self._copy_done(fate, 0, 0)

    def _egress_dropped(self, fate: Any) -> None:
        """Egress made no frame of a copy: the pipeline dropped it."""
        self._dropped(fate, PIPELINE)
        self._copy_done(fate, 0, 0)

    def _forward_one(self, ctx: Any, port: int, frame: bytes, start: float, /) -> None:
        """A packet whose one copy left egress as one frame for `port` (the batch path's common case): exactly
        `_copies`, `_send_out` and `_copy_done`; a side may do the same in one step."""
        self._send_out([(port, frame)], self._copies(ctx, 1), start)

    def _send_copy(self, fate: Any, port: int, frame: bytes, start: float, /) -> None:
        """A copy whose egress made one frame, for `port` (the common case): exactly `_send_out` of that one
        frame; a side may do the same in one step."""
        self._send_out([(port, frame)], fate, start)

    def _send_out(self, frames: list[tuple[int, bytes]], fate: Any, start: float) -> None:
        """A copy's egress output onto the wire at `start` (or to the CPU)."""
        nfwd = ncpu = 0
        cpu_port, out, up = self.cpu_port, self.out, self.up_state
        for oport, data in frames:
            if oport == cpu_port:
                ncpu += 1
                self._packet_in(data)
                continue
            ch = out.get(oport)
            if ch is None:
                self._dropped(fate, NO_PORT)
            elif not up.get(oport):
                self._dropped(fate, PORT_DOWN)
            elif ch.send(data, start) is False:
                self._dropped(fate, TX_ERROR)
            else:
                nfwd += 1
        self._copy_done(fate, nfwd, ncpu)


class _LoopClock:
    """Flow control's clock on a switch: the traffic manager's time and the loop's timer."""

    __slots__ = ("now_ns", "at")

    def __init__(self, clock: Any, timer: Timer) -> None:
        self.now_ns = clock.now_ns
        self.at = timer.at
