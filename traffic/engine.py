"""The replay engine: one process sends the transfers of many endpoints and receives them, with pacing,
dependencies and hard bounds on packets and time.

Each endpoint plane is a `Port` (namespace + interface + MAC/IP). The engine opens one AF_PACKET socket per
port inside its namespace, expands the planned collectives into flows (one flow per transfer), starts a flow
when every transfer it depends on has *arrived* (or was given up as lossy), paces each flow at its rate, and
reads every port's socket in the same loop. Nothing runs unbounded: `time_limit_s` and `max_packets` stop
the run, and a flow whose last packet was sent is settled after `loss_grace_s` even if packets are missing.
"""

from __future__ import annotations

import errno
import heapq
import select
import time

from traffic.frames import FORMATS, PROBE, Addr, Parsed, Template
from traffic.netns import open_packet_socket, socket_drops
from traffic.reaction import make_reaction
from traffic.receiver import FlowRx, Receiver
from traffic.records import (
    CollectiveRecord,
    EngineConfig,
    FlowRecord,
    PlannedCollective,
    Port,
    RunResult,
)

__all__ = ["CollectiveRecord", "Engine", "EngineConfig", "FlowRecord", "PlannedCollective", "Port", "RunResult"]


class _Flow:
    """Sender-side state of one flow (slots: touched per packet)."""

    __slots__ = ("rec", "sock", "tpl", "tail", "deps_left", "dependents", "coll", "offset_ns", "next_ns",
                 "cc", "rx", "seq", "payload", "frame_bits", "dst_ep", "last_progress_ns")


class Engine:
    """Replays planned collectives on the given ports. Use as a context manager so sockets get closed."""

    def __init__(self, ports: dict[tuple[int, int], Port], config: EngineConfig | None = None) -> None:
        self.ports = dict(ports)
        self.config = config or EngineConfig()
        if self.config.frame_format not in FORMATS:
            raise ValueError(f"unknown frame format {self.config.frame_format!r}; known: {', '.join(FORMATS)}")
        self.fmt = FORMATS[self.config.frame_format]
        self.payload = self.fmt.payload_per_packet(self.config.mtu)
        if self.payload < PROBE.size:
            raise ValueError(f"MTU {self.config.mtu} leaves no room for the probe record")
        self._socks: dict[tuple[str | None, str], object] = {}
        self._planes: dict[int, list[int]] = {}
        for ep, plane in sorted(self.ports):
            self._planes.setdefault(ep, []).append(plane)

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        for s in self._socks.values():
            s.close()
        self._socks.clear()

    def port(self, endpoint: int, plane: int) -> Port:
        planes = self._planes.get(endpoint)
        if not planes:
            raise KeyError(f"endpoint {endpoint} has no port")
        return self.ports[(endpoint, plane if plane in planes else planes[plane % len(planes)])]

    def _sock(self, port: Port):
        key = (port.netns, port.ifname)
        if key not in self._socks:
            self._socks[key] = open_packet_socket(port.netns, port.ifname)
        return self._socks[key]

    # ---------------------------------------------------------------- setup
    def _template(self, cache: dict, src: Addr, dst: Addr, flow: int, payload: int,
                  gateway: str | None) -> Template:
        """Scapy builds one template per payload size; other endpoint pairs and flows are byte patches."""
        key = (src, dst, payload, gateway)
        pair = cache.get(key)
        if pair is None:
            base = cache.get(payload)
            if base is None:
                base = cache[payload] = self.fmt.build(src, dst, flow, payload, self.config.ecn, gateway)
            pair = cache[key] = self.fmt.for_pair(base, src, dst, gateway)
        return self.fmt.for_flow(pair, flow)

    def _expand(self, plan: list[PlannedCollective], receiver: Receiver):
        flows: list[_Flow] = []
        colls: list[CollectiveRecord] = []
        templates: dict[tuple, Template] = {}
        for ci, pc in enumerate(plan):
            s = pc.schedule
            crec = CollectiveRecord(pc.name, pc.iteration, s.kind, s.algorithm, s.size, s.ranks)
            colls.append(crec)
            base = len(flows)
            for t in s.transfers:
                f = _Flow()
                src, dst = self.port(t.src, t.plane), self.port(t.dst, t.plane)
                npkts = t.packets(self.payload)
                fid = len(flows)
                f.rec = FlowRecord(fid, pc.key, t.id, t.src, t.dst, t.plane, t.bytes, npkts)
                f.sock = self._sock(src)
                self._sock(dst)  # the receiver must listen even if it never sends
                a_src, a_dst = Addr(src.mac, src.ip, t.src, t.plane), Addr(dst.mac, dst.ip, t.dst, t.plane)
                tail_len = t.bytes - (npkts - 1) * self.payload
                f.tpl = self._template(templates, a_src, a_dst, fid, self.payload, src.gateway_mac)
                f.tail = (f.tpl if tail_len == self.payload else
                          self._template(templates, a_src, a_dst, fid, tail_len, src.gateway_mac))
                f.deps_left = len(t.depends_on)
                f.dependents = []
                f.coll = ci
                f.offset_ns = int(t.offset_s * 1e9)
                f.payload = tail_len
                f.frame_bits = len(f.tpl.buf) * 8
                f.dst_ep = t.dst
                f.seq = 0
                f.cc = None
                f.next_ns = 0
                f.last_progress_ns = 0
                f.rx = receiver.expect(fid, npkts)
                crec.flows.append(fid)
                flows.append(f)
            for t in s.transfers:
                for d in t.depends_on:
                    flows[base + d].dependents.append(base + t.id)
        return flows, colls

    # ---------------------------------------------------------------- run
    def run(self, plan: list[PlannedCollective]) -> RunResult:
        cfg = self.config
        receiver = Receiver()
        flows, colls = self._expand(plan, receiver)
        reaction = make_reaction(cfg.reaction, cfg.rate_bps, **cfg.reaction_params)
        keys = {pc.key: i for i, pc in enumerate(plan)}
        coll_left = [len(pc.schedule.transfers) for pc in plan]
        coll_wait = [sum(1 for a in pc.after if a in keys) for pc in plan]
        coll_next: dict[int, list[int]] = {}
        for i, pc in enumerate(plan):
            for a in pc.after:
                if a in keys:
                    coll_next.setdefault(keys[a], []).append(i)
        sock_ep: dict[int, set[int]] = {}
        for (ep, _plane), p in self.ports.items():
            key = (p.netns, p.ifname)
            if key in self._socks:
                sock_ep.setdefault(self._socks[key].fileno(), set()).add(ep)
        poller = select.epoll()  # reports only the ready sockets: cheap with hundreds of ports
        fd_sock = {}
        for s in self._socks.values():
            poller.register(s.fileno(), select.EPOLLIN)
            fd_sock[s.fileno()] = s
        # per source port pacing (the NIC's line rate), shared by all flows leaving that port
        port_slot = {fd: i for i, fd in enumerate(fd_sock)}
        port_next = [0] * len(port_slot)
        port_ns_per_bit = 1e9 / cfg.port_rate_bps if cfg.port_rate_bps else 0.0
        port_slack_ns = int(cfg.burst * (cfg.mtu + 14) * 8 * port_ns_per_bit)
        for s in self._socks.values():
            socket_drops(s)  # reset the kernel's counter

        t0 = time.monotonic_ns()
        deadline = t0 + int(cfg.time_limit_s * 1e9)
        grace_ns = int(cfg.loss_grace_s * 1e9)
        timers: list[tuple[int, int, str, int]] = []  # (time, tiebreak, kind, id)
        sendq: list[tuple[int, int]] = []  # (next send time, flow)
        tick = 0
        settled = 0
        packets = 0
        limit_hit = False
        timed_out = False
        unsettled = len(flows)

        def push_timer(when: int, kind: str, ident: int) -> None:
            nonlocal tick
            tick += 1
            heapq.heappush(timers, (when, tick, kind, ident))

        def start_collective(ci: int, now: int) -> None:
            colls[ci].start_ns = now
            for fid in colls[ci].flows:
                if flows[fid].deps_left == 0:
                    push_timer(now + flows[fid].offset_ns, "flow", fid)
            if not colls[ci].flows:
                finish_collective(ci, now)

        def finish_collective(ci: int, now: int) -> None:
            colls[ci].end_ns = now
            for nxt in coll_next.get(ci, ()):
                coll_wait[nxt] -= 1
                if coll_wait[nxt] == 0:
                    pn = plan[nxt]
                    push_timer(max(now + int(pn.delay_s * 1e9), t0 + int(pn.start_s * 1e9)), "coll", nxt)

        def settle(fid: int, now: int) -> None:
            nonlocal settled, unsettled
            f = flows[fid]
            if f.rec.settle_ns:
                return
            f.rec.settle_ns = now
            unsettled -= 1
            for d in f.dependents:
                g = flows[d]
                g.deps_left -= 1
                if g.deps_left == 0:
                    push_timer(now + g.offset_ns, "flow", d)
            ci = f.coll
            coll_left[ci] -= 1
            if coll_left[ci] == 0:
                finish_collective(ci, now)

        for ci, pc in enumerate(plan):
            if coll_wait[ci] == 0:
                push_timer(t0 + int((pc.start_s + pc.delay_s) * 1e9), "coll", ci)

        parse = self.fmt.parse
        burst = cfg.burst
        window_of = reaction.window
        rate_of = reaction.rate_bps
        on_delivery = reaction.on_delivery
        recv_budget = 1024  # drain each socket: receiving is dearer than sending and must keep up

        while unsettled:
            now = time.monotonic_ns()
            if now >= deadline:
                timed_out = True
                break
            # receive first, so socket buffers never overflow because we were busy sending
            for fd, _ev in poller.poll(0):
                sock = fd_sock[fd]
                eps = sock_ep.get(fd, ())
                for _ in range(recv_budget):
                    try:
                        data = sock.recv(4096)
                    except BlockingIOError:
                        break
                    p: Parsed | None = parse(data)
                    if p is None or p.flow >= len(flows):
                        continue
                    f = flows[p.flow]
                    if f.dst_ep not in eps:
                        continue  # flooded copy that reached a bystander
                    rx: FlowRx | None = receiver.on_frame(p, now)
                    if rx is None:
                        continue
                    f.last_progress_ns = now
                    if f.cc is not None:
                        on_delivery(f.cc, p.ce, p.qdepth, now / 1e9)
                    if rx.complete and not f.rec.settle_ns:
                        settle(p.flow, now)
            # timers: collective starts, flow starts, loss grace expiries
            while timers and timers[0][0] <= now:
                _, _, kind, ident = heapq.heappop(timers)
                if kind == "coll":
                    start_collective(ident, now)
                elif kind == "flow":
                    f = flows[ident]
                    f.rec.start_ns = now
                    if limit_hit:  # the packet budget is spent: nothing more goes on the wire
                        f.rec.send_done_ns = now
                        settle(ident, now)
                        continue
                    f.cc = reaction.start(now / 1e9)
                    f.next_ns = now
                    f.last_progress_ns = now
                    heapq.heappush(sendq, (now, ident))
                elif kind == "grace" and not flows[ident].rec.settle_ns:
                    settle(ident, now)
            # send what is due
            budget = cfg.send_batch
            while sendq and sendq[0][0] <= now and budget > 0:
                _, fid = heapq.heappop(sendq)
                f = flows[fid]
                rec = f.rec
                cc = f.cc
                win = window_of(cc)
                slot = port_slot[f.sock.fileno()]
                n = 0
                while n < burst and f.seq < rec.npkts and f.next_ns <= now and port_next[slot] <= now:
                    if win is not None and f.seq - f.rx.delivered >= win \
                            and now - f.last_progress_ns < grace_ns:
                        break
                    if packets >= cfg.max_packets:
                        limit_hit = True
                        break
                    last = f.seq == rec.npkts - 1
                    tpl = f.tail if last else f.tpl
                    buf = tpl.stamp(fid, f.seq, rec.npkts, now)
                    try:
                        f.sock.send(buf)
                    except BlockingIOError:
                        f.next_ns = now + 20_000
                        break
                    except OSError as e:
                        if e.errno not in (errno.ENOBUFS, errno.ENETDOWN, errno.ENXIO):
                            raise
                        rec.tx_dropped += 1
                    f.seq += 1
                    rec.sent += 1
                    packets += 1
                    n += 1
                    f.next_ns += int(len(buf) * 8 * 1e9 / rate_of(cc, now / 1e9))
                    if port_ns_per_bit:
                        # token bucket: time lost to a slow loop turn may be caught up, `burst` frames deep
                        port_next[slot] = (max(port_next[slot], now - port_slack_ns)
                                           + int(len(buf) * 8 * port_ns_per_bit))
                budget -= max(n, 1)
                if f.seq >= rec.npkts:
                    rec.send_done_ns = now
                    rec.rate_cuts = cc.cuts
                    if not f.rx.complete:
                        push_timer(now + grace_ns, "grace", fid)
                elif limit_hit:
                    rec.send_done_ns = now
                    push_timer(now + grace_ns, "grace", fid)
                elif win is not None and f.seq - f.rx.delivered >= win:
                    heapq.heappush(sendq, (now + 50_000, fid))  # window full: look again shortly
                else:
                    heapq.heappush(sendq, (max(f.next_ns, now, port_next[slot]), fid))
            # sleep until something is due, but keep reading sockets
            nxt = min(sendq[0][0] if sendq else deadline, timers[0][0] if timers else deadline)
            wait_ms = (nxt - time.monotonic_ns()) / 1e6
            if wait_ms >= 1:
                poller.poll(min(wait_ms, 5) / 1e3)

        poller.close()
        end = time.monotonic_ns()
        drops = sum(socket_drops(s) for s in self._socks.values())
        for f in flows:
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
        for c in colls:
            ends = [flows[i].rec.settle_ns for i in c.flows]
            if c.end_ns and all(ends):
                c.end_ns = max(ends)
        return RunResult([f.rec for f in flows], colls, (end - t0) / 1e9, packets, timed_out, limit_hit,
                         drops, receiver.foreign, cfg)
