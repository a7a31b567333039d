"""Hosts in virtual time: NIC ports (one per plane, one queue each, served round-robin over ready flows at
the port's line rate) and the endpoints that replay planned collectives, as traffic/engine.py does on real
sockets — same frames (traffic/frames.py templates), same receive accounting (traffic/receiver.py), same
congestion reactions (traffic/reaction.py, called with virtual time) and the same records (RunResult), so
traffic/metrics.py writes metrics.json, metrics.csv and flows.csv unchanged.

Like the emulated engine, a receiver hands congestion feedback (CE mark, path queue depth) to its sender
in-process, with a reverse path of zero delay; a flow whose last packet is sent but which misses packets is
settled after `loss_grace_ns` so the collective can go on (loss is counted, not repaired: the transport is
the seam for reliable transports, see `FlowSender`).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from topologies.model import Topology
from traffic.frames import FORMATS, PROBE, Addr, Template
from traffic.reaction import FlowCC, NoReaction, make_reaction
from traffic.receiver import FlowRx, Receiver
from traffic.records import CollectiveRecord, EngineConfig, FlowRecord, PlannedCollective, Port, RunResult
from traffic.replay import ports_for_topology
from vfabric.events import Simulator
from vfabric.links import Channel, wire_bytes


@dataclass
class HostConfig:
    """How endpoints behave in virtual time. `flow_rate_bps` None: each flow may send at its NIC port's line
    rate (the NIC then shares the port among its flows). Reaction parameters default to the published
    constants in traffic/reaction.py (not the emulation's scaled ones)."""

    frame_format: str = "roce"
    mtu: int = 1500
    ecn: bool = True
    reaction: str = "none"
    reaction_params: dict | None = None
    flow_rate_bps: float | None = None
    loss_grace_ns: int = 1_000_000
    max_packets: int = 50_000_000


class _Flow:
    __slots__ = ("fid", "rec", "nic", "tpl", "tail", "deps_left", "dependents", "coll", "offset_ns", "next_ns",
                 "cc", "rx", "seq", "payload", "dst_ep", "last_progress_ns", "wire_bits", "tail_wire_bits",
                 "blocked", "queued")


class NicPort:
    """One plane port of a host NIC: ready flows take turns, one frame at a time, at line rate."""

    __slots__ = ("sim", "channel", "busy_until", "ready", "scheduled", "engine")

    def __init__(self, sim: Simulator, channel: Channel, engine: VirtualEndpoints) -> None:
        self.sim = sim
        self.channel = channel
        self.engine = engine
        self.busy_until = 0.0
        self.ready: deque[_Flow] = deque()
        self.scheduled = False

    def make_ready(self, f: _Flow) -> None:
        if f.queued:
            return
        f.queued = True
        self.ready.append(f)
        self._kick()

    def _kick(self) -> None:
        if self.scheduled or not self.ready:
            return
        now = self.sim.now
        if self.busy_until <= now:
            self._transmit()  # the port is free now: no event needed
            return
        self.scheduled = True
        self.sim.at(math.ceil(self.busy_until), self._transmit)

    def _transmit(self) -> None:
        self.scheduled = False
        ready = self.ready
        while ready:
            f = ready.popleft()
            f.queued = False
            if self.engine.send_one(f, self):
                break
        self._kick()


class VirtualEndpoints:
    """All endpoints of a topology. `attach(eid, plane, channel)` wires a NIC port to its link; the fabric
    delivers frames to `receive(eid, plane, frame)`."""

    def __init__(self, sim: Simulator, topo: Topology, config: HostConfig | None = None) -> None:
        self.sim = sim
        self.topo = topo
        self.config = config or HostConfig()
        if self.config.frame_format not in FORMATS:
            raise ValueError(f"unknown frame format {self.config.frame_format!r}; known: {', '.join(FORMATS)}")
        self.fmt = FORMATS[self.config.frame_format]
        self.payload = self.fmt.payload_per_packet(self.config.mtu)
        if self.payload < PROBE.size:
            raise ValueError(f"MTU {self.config.mtu} leaves no room for the probe record")
        self.ports: dict[tuple[int, int], Port] = ports_for_topology(topo, lambda _h: None)
        self.nics: dict[tuple[int, int], NicPort] = {}
        self._planes: dict[int, list[int]] = {}
        for ep, plane in sorted(self.ports):
            self._planes.setdefault(ep, []).append(plane)
        self.flows: list[_Flow] = []
        self.colls: list[CollectiveRecord] = []
        self.receiver = Receiver()
        self.packets = 0
        self.limit_hit = False
        self.foreign = 0
        self.unsettled = 0
        self.t0 = 0

    def attach(self, eid: int, plane: int, channel: Channel) -> None:
        self.nics[(eid, plane)] = NicPort(self.sim, channel, self)

    def _port_key(self, endpoint: int, plane: int) -> tuple[int, int]:
        planes = self._planes.get(endpoint)
        if not planes:
            raise KeyError(f"endpoint {endpoint} has no port")
        return (endpoint, plane if plane in planes else planes[plane % len(planes)])

    # ---------------------------------------------------------------- plan
    def load(self, plan: Sequence[PlannedCollective], start_ns: int = 0) -> None:
        """Expand the plan into flows and schedule the collectives that wait for nothing."""
        cfg = self.config
        self.plan = list(plan)
        templates: dict[tuple, Template] = {}
        for ci, pc in enumerate(self.plan):
            s = pc.schedule
            crec = CollectiveRecord(pc.name, pc.iteration, s.kind, s.algorithm, s.size, s.ranks)
            self.colls.append(crec)
            base = len(self.flows)
            for t in s.transfers:
                f = _Flow()
                skey, dkey = self._port_key(t.src, t.plane), self._port_key(t.dst, t.plane)
                src, dst = self.ports[skey], self.ports[dkey]
                npkts = t.packets(self.payload)
                fid = len(self.flows)
                f.fid = fid
                f.rec = FlowRecord(fid, pc.key, t.id, t.src, t.dst, t.plane, t.bytes, npkts)
                f.nic = self.nics[skey]
                a_src, a_dst = Addr(src.mac, src.ip, t.src, t.plane), Addr(dst.mac, dst.ip, t.dst, t.plane)
                tail_len = t.bytes - (npkts - 1) * self.payload
                f.tpl = self._template(templates, a_src, a_dst, fid, self.payload)
                f.tail = f.tpl if tail_len == self.payload else self._template(templates, a_src, a_dst, fid,
                                                                               tail_len)
                f.wire_bits = wire_bytes(len(f.tpl.buf)) * 8
                f.tail_wire_bits = wire_bytes(len(f.tail.buf)) * 8
                f.deps_left = len(t.depends_on)
                f.dependents = []
                f.coll = ci
                f.offset_ns = int(round(t.offset_s * 1e9))
                f.payload = tail_len
                f.dst_ep = t.dst
                f.seq = 0
                f.cc = None
                f.next_ns = 0.0
                f.last_progress_ns = 0
                f.blocked = False
                f.queued = False
                f.rx = self.receiver.expect(fid, npkts)
                crec.flows.append(fid)
                self.flows.append(f)
            for t in s.transfers:
                for d in t.depends_on:
                    self.flows[base + d].dependents.append(base + t.id)
        rate = cfg.flow_rate_bps or max((n.channel.link.rate_bps for n in self.nics.values()), default=1e9)
        self.reaction: NoReaction = make_reaction(cfg.reaction, rate, **(cfg.reaction_params or {}))
        self.flow_rate_bps = cfg.flow_rate_bps
        keys = {pc.key: i for i, pc in enumerate(self.plan)}
        self.coll_left = [len(pc.schedule.transfers) for pc in self.plan]
        self.coll_wait = [sum(1 for a in pc.after if a in keys) for pc in self.plan]
        self.coll_next: dict[int, list[int]] = {}
        for i, pc in enumerate(self.plan):
            for a in pc.after:
                if a in keys:
                    self.coll_next.setdefault(keys[a], []).append(i)
        self.unsettled = len(self.flows)
        self.t0 = start_ns
        for ci, pc in enumerate(self.plan):
            if self.coll_wait[ci] == 0:
                self.sim.at(start_ns + int(round((pc.start_s + pc.delay_s) * 1e9)), self._start_collective, ci)

    def _template(self, cache: dict, src: Addr, dst: Addr, flow: int, payload: int) -> Template:
        key = (src, dst, payload)
        pair = cache.get(key)
        if pair is None:
            base = cache.get(payload)
            if base is None:
                base = cache[payload] = self.fmt.build(src, dst, flow, payload, self.config.ecn, None)
            pair = cache[key] = self.fmt.for_pair(base, src, dst, None)
        return self.fmt.for_flow(pair, flow)

    # ---------------------------------------------------------------- collectives and flows
    def _start_collective(self, ci: int) -> None:
        now = self.sim.now
        self.colls[ci].start_ns = now
        for fid in self.colls[ci].flows:
            f = self.flows[fid]
            if f.deps_left == 0:
                self.sim.at(now + f.offset_ns, self._start_flow, fid)
        if not self.colls[ci].flows:
            self._finish_collective(ci)

    def _finish_collective(self, ci: int) -> None:
        now = self.sim.now
        self.colls[ci].end_ns = now
        for nxt in self.coll_next.get(ci, ()):
            self.coll_wait[nxt] -= 1
            if self.coll_wait[nxt] == 0:
                pn = self.plan[nxt]
                at = max(now + int(round(pn.delay_s * 1e9)), self.t0 + int(round(pn.start_s * 1e9)))
                self.sim.at(at, self._start_collective, nxt)

    def _start_flow(self, fid: int) -> None:
        now = self.sim.now
        f = self.flows[fid]
        f.rec.start_ns = now
        if self.limit_hit:
            f.rec.send_done_ns = now
            self._settle(fid)
            return
        rate = self.flow_rate_bps or f.nic.channel.link.rate_bps
        f.cc = self.reaction.start(now / 1e9)
        f.cc.rate_bps = f.cc.target_bps = rate
        f.next_ns = float(now)
        f.last_progress_ns = now
        f.nic.make_ready(f)

    def _settle(self, fid: int) -> None:
        f = self.flows[fid]
        if f.rec.settle_ns:
            return
        f.rec.settle_ns = self.sim.now
        self.unsettled -= 1
        for d in f.dependents:
            g = self.flows[d]
            g.deps_left -= 1
            if g.deps_left == 0:
                self.sim.at(self.sim.now + g.offset_ns, self._start_flow, d)
        ci = f.coll
        self.coll_left[ci] -= 1
        if self.coll_left[ci] == 0:
            self._finish_collective(ci)

    def _grace(self, fid: int) -> None:
        if not self.flows[fid].rec.settle_ns:
            self._settle(fid)

    def send_one(self, f: _Flow, nic: NicPort) -> bool:
        """Called by the NIC when the port is free and `f` is at the head: send one frame, or say why not
        (False: the flow is waiting for pacing time or window, and will be made ready again)."""
        now = self.sim.now
        rec = f.rec
        if f.seq >= rec.npkts or rec.send_done_ns:
            return False
        if f.next_ns > now + 1e-6:
            self.sim.at(math.ceil(f.next_ns), self._wake, f.fid)
            return False
        cc: FlowCC = f.cc
        win = self.reaction.window(cc)
        if win is not None and f.seq - f.rx.delivered >= win and now - f.last_progress_ns < self.config.loss_grace_ns:
            f.blocked = True
            self.sim.at(f.last_progress_ns + self.config.loss_grace_ns, self._wake, f.fid)
            return False
        if self.packets >= self.config.max_packets:
            self.limit_hit = True
            rec.send_done_ns = now
            self.sim.after(self.config.loss_grace_ns, self._grace, f.fid)
            return False
        last = f.seq == rec.npkts - 1
        tpl = f.tail if last else f.tpl
        frame = bytes(tpl.stamp(f.fid, f.seq, rec.npkts, now))
        # Back to back: start where the previous frame ended (fractional ns), not at the whole ns the event
        # was rounded up to, or every frame would lose up to 1 ns (0.8 % of a 1.5 kB frame at 400 Gbit/s).
        start = nic.busy_until if now - nic.busy_until < 1.0 else float(now)
        end = nic.channel.send(frame, start)
        nic.busy_until = end
        f.seq += 1
        rec.sent += 1
        self.packets += 1
        bits = f.tail_wire_bits if last else f.wire_bits
        f.next_ns = max(f.next_ns, start) + bits * 1e9 / self.reaction.rate_bps(cc, now / 1e9)
        if f.seq >= rec.npkts:
            rec.send_done_ns = now
            rec.rate_cuts = cc.cuts
            if not f.rx.complete:
                self.sim.after(self.config.loss_grace_ns, self._grace, f.fid)
        elif f.next_ns <= end + 1e-6:
            nic.make_ready(f)
        else:
            self.sim.at(math.ceil(f.next_ns), self._wake, f.fid)
        return True

    def _wake(self, fid: int) -> None:
        f = self.flows[fid]
        f.blocked = False
        if f.seq < f.rec.npkts and not f.rec.send_done_ns:
            f.nic.make_ready(f)

    # ---------------------------------------------------------------- receive
    def receive(self, eid: int, frame: bytes) -> None:
        p = self.fmt.parse(frame)
        if p is None or p.flow >= len(self.flows):
            self.foreign += 1
            return
        f = self.flows[p.flow]
        if f.dst_ep != eid:
            self.foreign += 1
            return
        now = self.sim.now
        rx: FlowRx | None = self.receiver.on_frame(p, now)
        if rx is None:
            return
        f.last_progress_ns = now
        if f.cc is not None:
            self.reaction.on_delivery(f.cc, p.ce, p.qdepth, now / 1e9)
            if f.blocked:
                win = self.reaction.window(f.cc)
                if win is None or f.seq - rx.delivered < win:
                    f.blocked = False
                    f.nic.make_ready(f)
        if rx.complete and not f.rec.settle_ns:
            self._settle(p.flow)

    # ---------------------------------------------------------------- result
    def result(self, duration_ns: int, timed_out: bool, engine_config: EngineConfig) -> RunResult:
        for f in self.flows:
            r, rx = f.rec, f.rx
            r.delivered, r.duplicates, r.reordered = rx.delivered, rx.duplicates, rx.reordered
            r.reorder_max, r.ce, r.qdepth_max = rx.reorder_max, rx.ce, rx.qdepth_max
            r.complete = rx.complete
            if rx.complete:
                r.settle_ns = rx.complete_ns
            tail_got = rx.seen[-1] if rx.npkts else 0
            r.delivered_bytes = (rx.delivered - tail_got) * self.payload + tail_got * f.payload
            if f.cc is not None:
                r.rate_cuts = f.cc.cuts
        for c in self.colls:
            ends = [self.flows[i].rec.settle_ns for i in c.flows]
            if c.end_ns and all(ends):
                c.end_ns = max(ends)
        return RunResult([f.rec for f in self.flows], self.colls, duration_ns / 1e9, self.packets, timed_out,
                         self.limit_hit, 0, self.foreign + self.receiver.foreign, engine_config)
