"""The replay engine: one process sends the transfers of many endpoints and receives them, with pacing,
dependencies and hard bounds on packets and time.

Each endpoint plane is a `Port` (namespace + interface + MAC/IP). The engine opens one AF_PACKET socket per
port inside its namespace, expands the planned collectives into flows (one flow per transfer), starts a flow
when every transfer it depends on has *arrived* (or was given up as lossy), paces each flow at its rate, and
reads every port's socket in the same loop. Nothing runs unbounded: `time_limit_s` and `max_packets` stop
the run, and a flow whose last packet was sent is settled after `loss_grace_s` even if packets are missing.

Which PSN goes on the wire next is the transport's decision (`traffic.transport`: `none`, `rc-gbn`, `sr`):
the engine asks the flow's sender, stamps the frame, and hands every arrival to the flow's receiver, whose
ACKs, NAKs and CNPs go back as real frames through the fabric (the receiving port's socket sends them) and
are handed to the sender when they arrive. Under a reliable transport a flow settles when its receiver has
every PSN (or its sender gave up); under `none` as before. The NIC's plane choice (`plane_policy`) picks, per
packet or per flowlet, which of the endpoint's planes (and which path entropy) a data frame takes.
"""

from __future__ import annotations

import errno
import heapq
import select
import socket
import time
from typing import Any

from traffic.frames import FORMATS, Addr, Parsed, Template, entropy
from traffic.inc.endpoint import CallbackClock, IncEndpoints
from traffic.netns import open_packet_socket, socket_drops
from traffic.planes import PathHealth, PlaneChoice, flow_planes
from traffic.progress import FlowGraph, finish_records
from traffic.reaction import FlowCC, make_reaction
from traffic.receiver import FlowRx, Receiver
from traffic.records import (
    CollectiveRecord,
    EngineConfig,
    FlowRecord,
    PlannedCollective,
    Port,
    RunResult,
)
from traffic.transport import CNP, Feedback, RttEstimator, Sender, make_transport, reliable, transport_params
from traffic.transport import Receiver as TransportReceiver
from traffic.transport.none import UnreliableSender

__all__ = ["CollectiveRecord", "Engine", "EngineConfig", "FlowRecord", "PlannedCollective", "Port", "RunResult"]



class _Path:
    """One way a flow's data can go: a plane of the source and the same plane of the destination."""

    __slots__ = ("sock", "tpl", "tail", "slot", "fb_tpl", "dst_fd")
    sock: socket.socket  # the source port's socket
    tpl: Template  # full-size data frame
    tail: Template  # the flow's last (shorter) frame
    slot: int  # the source port's pacing slot
    fb_tpl: Template | None  # feedback frame from the destination back (reliable transports)
    dst_fd: int  # the destination port's socket


class _Flow:
    """Sender-side state of one flow (slots: touched per packet)."""

    __slots__ = ("rec", "paths", "path", "next_ns", "cc", "rx", "tx", "trx", "payload", "dst_ep", "src_ep",
                 "last_progress_ns", "parked", "tx_timer", "rx_timer", "hi", "fb_by_fd", "plane", "rx_fd")
    rec: FlowRecord
    paths: list[_Path]
    path: _Path
    next_ns: int
    cc: FlowCC | None  # None until the flow starts
    rx: FlowRx  # wire statistics (and delivery under `none`)
    tx: Sender
    trx: TransportReceiver
    payload: int  # payload bytes of the last packet
    dst_ep: int
    src_ep: int
    last_progress_ns: int
    parked: bool
    tx_timer: int
    rx_timer: int
    hi: int  # one past the highest PSN sent
    fb_by_fd: dict[int, tuple[socket.socket, Template]]  # destination socket fd -> (its socket, feedback tpl)
    plane: PlaneChoice | None
    rx_fd: int


class Engine:
    """Replays planned collectives on the given ports. Use as a context manager so sockets get closed."""

    def __init__(self, ports: dict[tuple[int, int], Port], config: EngineConfig | None = None) -> None:
        self.ports = dict(ports)
        self.config = config or EngineConfig()
        cfg = self.config.validate()
        self.tparams = transport_params(**cfg.transport_params)
        self.fmt = FORMATS[cfg.frame_format]
        self.payload = self.fmt.payload_per_packet(cfg.mtu)
        self._socks: dict[tuple[str | None, str], socket.socket] = {}
        self._planes: dict[int, list[int]] = {}
        for ep, plane in sorted(self.ports):
            self._planes.setdefault(ep, []).append(plane)

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
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

    def _sock(self, port: Port) -> socket.socket:
        key = (port.netns, port.ifname)
        if key not in self._socks:
            self._socks[key] = open_packet_socket(port.netns, port.ifname)
        return self._socks[key]

    # ---------------------------------------------------------------- setup
    def _template(self, cache: dict[Any, Template], src: Addr, dst: Addr, flow: int, payload: int,
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

    def _feedback_template(self, cache: dict[Any, Template], src: Addr, dst: Addr, flow: int, gateway: str | None) -> Template:
        key = ("fb", src, dst, gateway)
        pair = cache.get(key)
        if pair is None:
            base = cache.get("fb")
            if base is None:
                base = cache["fb"] = self.fmt.build_feedback(src, dst, flow, gateway)
            pair = cache[key] = self.fmt.for_pair(base, src, dst, gateway)
        return self.fmt.for_flow(pair, flow)

    def _expand(self, plan: list[PlannedCollective],
                receiver: Receiver) -> tuple[list[_Flow], list[CollectiveRecord]]:
        flows: list[_Flow] = []
        colls: list[CollectiveRecord] = []
        templates: dict[Any, Template] = {}
        rtts: dict[tuple[int, int], RttEstimator] = {}  # one per endpoint pair, like a NIC's per-peer state
        health: dict[tuple[int, int, int], PathHealth] = {}
        cfg = self.config
        rel = reliable(self.config.transport)
        for pc in plan:
            s = pc.schedule
            crec = CollectiveRecord(pc.name, pc.iteration, s.kind, s.algorithm, s.size, s.ranks)
            colls.append(crec)
            for t in s.transfers:
                f = _Flow()
                npkts = t.packets(self.payload)
                fid = len(flows)
                f.rec = FlowRecord(fid, pc.key, t.id, t.src, t.dst, t.plane, t.bytes, npkts)
                tail_len = t.bytes - (npkts - 1) * self.payload
                f.paths = []
                f.fb_by_fd = {}
                for plane in flow_planes(cfg.plane_policy, self._planes.get(t.src, []),
                                         self._planes.get(t.dst, []), t.plane):
                    src, dst = self.port(t.src, plane), self.port(t.dst, plane)
                    path = _Path()
                    path.sock = self._sock(src)
                    dsock = self._sock(dst)  # the receiver must listen even if it never sends
                    a_src = Addr(src.mac, src.ip, t.src, plane)
                    a_dst = Addr(dst.mac, dst.ip, t.dst, plane)
                    path.tpl = self._template(templates, a_src, a_dst, fid, self.payload, src.gateway_mac)
                    path.tail = (path.tpl if tail_len == self.payload else
                                 self._template(templates, a_src, a_dst, fid, tail_len, src.gateway_mac))
                    path.slot = 0
                    path.dst_fd = dsock.fileno()
                    path.fb_tpl = (self._feedback_template(templates, a_dst, a_src, fid, dst.gateway_mac)
                                   if rel else None)
                    if path.fb_tpl is not None:
                        f.fb_by_fd.setdefault(path.dst_fd, (dsock, path.fb_tpl))
                    f.paths.append(path)
                f.rx_fd = f.paths[0].dst_fd  # where the latest data arrived: timer ACKs go back that way
                f.payload = tail_len
                f.dst_ep = t.dst
                f.src_ep = t.src
                f.cc = None
                f.next_ns = 0
                f.last_progress_ns = 0
                f.parked = False
                f.tx_timer = f.rx_timer = 0
                f.hi = 0
                pair = (t.src, t.dst)
                if pair not in rtts:
                    rtts[pair] = RttEstimator(self.tparams)
                f.tx, f.trx = make_transport(self.config.transport, npkts, self.tparams, rtts[pair])
                npaths = len(f.paths)
                if npaths > 1:  # the NIC picks a plane per packet or flowlet (traffic/planes.py)
                    key = (t.src, t.dst, npaths)
                    if key not in health:
                        health[key] = PathHealth(npaths)
                    f.plane = PlaneChoice(cfg.plane_policy, npaths, npkts, health[key], self.tparams.rto_ns,
                                          entropy(fid), cfg.spray_unit, int(cfg.flowlet_gap_s * 1e9))
                else:
                    f.plane = None
                f.rx = receiver.expect(fid, npkts)
                crec.flows.append(fid)
                flows.append(f)
        return flows, colls

    # ---------------------------------------------------------------- run
    def run(self, plan: list[PlannedCollective]) -> RunResult:
        cfg = self.config
        receiver = Receiver()
        flows, colls = self._expand(plan, receiver)
        inc_calls: list[Any] = []  # in-network all-reduce (traffic/inc): its timers, by index

        def inc_at(at: int, fn: Any) -> None:
            inc_calls.append(fn)
            push_timer(at, "inc", len(inc_calls) - 1)

        def inc_finish(ci: int) -> None:
            colls[ci].inc = inc.stats(ci)
            graph.finish_external(ci, time.monotonic_ns())

        inc = IncEndpoints(plan, sorted({pl for _ep, pl in self.ports}), CallbackClock(time.monotonic_ns, inc_at),
                           lambda eid, plane, frame: inc_send(eid, plane, frame), inc_finish)
        for spec in inc.jobs():  # every member's port of the job's plane listens
            for eid in spec.members:
                self._sock(self.port(eid, spec.plane))
        reaction = make_reaction(cfg.reaction, cfg.rate_bps, **cfg.reaction_params)
        rel = reliable(cfg.transport)
        sock_ep: dict[int, set[int]] = {}
        for (ep, _plane), port in self.ports.items():
            key = (port.netns, port.ifname)
            if key in self._socks:
                sock_ep.setdefault(self._socks[key].fileno(), set()).add(ep)
        poller = select.epoll()  # reports only the ready sockets: cheap with hundreds of ports
        fd_sock: dict[int, socket.socket] = {}
        for s in self._socks.values():
            poller.register(s.fileno(), select.EPOLLIN)
            fd_sock[s.fileno()] = s
        # per source port pacing (the NIC's line rate), shared by all flows leaving that port
        port_slot = {fd: i for i, fd in enumerate(fd_sock)}
        for f in flows:
            for path in f.paths:
                path.slot = port_slot[path.sock.fileno()]
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
        packets = 0
        limit_hit = False
        timed_out = False

        def push_timer(when: int, kind: str, ident: int) -> None:
            nonlocal tick
            tick += 1
            heapq.heappush(timers, (when, tick, kind, ident))

        graph = FlowGraph(plan, colls, [f.rec for f in flows], lambda when, fid: push_timer(when, "flow", fid),
                          lambda when, ci: push_timer(when, "coll", ci))
        settle = graph.settle
        if inc:
            graph.on_external = inc.start

        def inc_send(eid: int, plane: int, frame: bytes) -> None:
            nonlocal packets
            try:
                self._sock(self.port(eid, plane)).send(frame)
            except OSError as e:  # a full socket buffer loses the frame: the INC timeout sends it again
                if not isinstance(e, BlockingIOError) and e.errno not in (errno.ENOBUFS, errno.ENETDOWN,
                                                                          errno.ENXIO):
                    raise
            packets += 1

        def arm_tx(fid: int, f: _Flow) -> None:
            t = f.tx.next_timer()
            if t is not None and (not f.tx_timer or t < f.tx_timer):
                f.tx_timer = t
                push_timer(t, "rto", fid)

        def arm_rx(fid: int, f: _Flow) -> None:
            t = f.trx.next_timer()
            if t is not None and (not f.rx_timer or t < f.rx_timer):
                f.rx_timer = t
                push_timer(t, "dack", fid)

        def send_feedback(fid: int, f: _Flow, fd: int, fbs: list[Feedback]) -> None:
            nonlocal packets
            entry = f.fb_by_fd.get(fd)
            sock, tpl = entry if entry is not None else f.fb_by_fd[f.paths[0].dst_fd]
            for fb in fbs:
                try:
                    sock.send(tpl.stamp_feedback(fid, fb))
                except OSError as e:  # BlockingIOError included: feedback is best effort, like on a NIC
                    if not isinstance(e, BlockingIOError) and e.errno not in (errno.ENOBUFS, errno.ENETDOWN,
                                                                              errno.ENXIO):
                        raise
            f.rec.feedback_sent += len(fbs)
            packets += len(fbs)

        def unpark(fid: int, f: _Flow, now: int) -> None:
            if f.parked and not f.tx.done:
                f.parked = False
                heapq.heappush(sendq, (max(now, f.next_ns), fid))

        graph.begin(t0)

        parse = self.fmt.parse
        burst = cfg.burst
        window_of = reaction.window
        rate_of = reaction.rate_bps
        on_delivery = reaction.on_delivery
        per_ack = reaction.name == "hpcc"
        recv_budget = 1024  # drain each socket: receiving is dearer than sending and must keep up

        while graph.unsettled:
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
                    except OSError as e:  # the port's link went down under a fault: nothing to read now
                        if e.errno not in (errno.ENETDOWN, errno.ENXIO):
                            raise
                        break
                    p: Parsed | None = parse(data)
                    if p is None or p.flow >= len(flows):
                        if p is None and inc:
                            for ep in eps:
                                inc.on_frame(ep, data)
                        continue
                    fid = p.flow
                    f = flows[fid]
                    fb = p.feedback
                    if fb is not None:  # an ACK/NAK/CNP back at the sender
                        cc = f.cc
                        if f.src_ep not in eps or cc is None:
                            continue
                        f.rec.feedback_received += 1
                        tx = f.tx
                        newly = tx.on_feedback(fb, now)
                        if fb.kind == CNP:
                            on_delivery(cc, True, -1, now / 1e9)
                        elif newly:
                            f.last_progress_ns = now
                            if per_ack:
                                for _k in range(newly):
                                    on_delivery(cc, False, fb.qdepth, now / 1e9)
                        if tx.failed and not f.rec.settle_ns:
                            settle(fid, now)
                        if f.parked:
                            unpark(fid, f, now)
                        t = tx.next_timer()  # arm_tx, inlined: once per ACK
                        if t is not None and (not f.tx_timer or t < f.tx_timer):
                            f.tx_timer = t
                            push_timer(t, "rto", fid)
                        continue
                    if f.dst_ep not in eps:
                        continue  # flooded copy that reached a bystander
                    if rel:
                        rx = f.rx
                        if p.npkts != rx.npkts:
                            receiver.foreign += 1
                            continue
                        trx = f.trx
                        trimmed = p.trimmed
                        fbs = trx.on_data(p.seq, now, trimmed, p.ce, p.qdepth, p.tx_ns)
                        if not trimmed:
                            rx.on_wire(p)  # wire statistics only: delivery is the transport receiver's
                        f.rx_fd = fd
                        if fbs:
                            send_feedback(fid, f, fd, fbs)
                        if not f.rx_timer:  # a pending ACK timer that fires early re-arms itself
                            arm_rx(fid, f)
                        if trx.delivered >= trx.npkts and not f.rec.settle_ns:
                            settle(fid, now)
                        continue
                    urx: FlowRx | None = receiver.on_frame(p, now)
                    if urx is None:
                        continue
                    f.last_progress_ns = now
                    if f.cc is not None:
                        on_delivery(f.cc, p.ce, p.qdepth, now / 1e9)
                    if urx.complete and not f.rec.settle_ns:
                        settle(fid, now)
            # timers: collective starts, flow starts, loss grace expiries, retransmission and ACK timers
            while timers and timers[0][0] <= now:
                _, _, kind, ident = heapq.heappop(timers)
                if kind == "coll":
                    graph.start_collective(ident, now)
                    continue
                if kind == "inc":
                    inc_calls[ident]()
                    continue
                f = flows[ident]
                if kind == "flow":
                    f.rec.start_ns = now
                    if limit_hit:  # the packet budget is spent: nothing more goes on the wire
                        f.rec.send_done_ns = now
                        settle(ident, now)
                        continue
                    f.cc = reaction.start(now / 1e9)
                    f.next_ns = now
                    f.last_progress_ns = now
                    heapq.heappush(sendq, (now, ident))
                elif kind == "rto":
                    f.tx_timer = 0
                    f.tx.on_timer(now)
                    if f.tx.failed:
                        if not f.rec.settle_ns:
                            settle(ident, now)
                    else:
                        unpark(ident, f, now)
                        arm_tx(ident, f)
                elif kind == "dack":
                    f.rx_timer = 0
                    fbs = f.trx.on_timer(now)
                    if fbs:
                        send_feedback(ident, f, f.rx_fd, fbs)
                    arm_rx(ident, f)
                elif kind == "grace" and not f.rec.settle_ns:
                    settle(ident, now)
            # send what is due
            budget = cfg.send_batch
            while sendq and sendq[0][0] <= now and budget > 0:
                _, fid = heapq.heappop(sendq)
                f = flows[fid]
                rec = f.rec
                cc = f.cc
                assert cc is not None  # only started flows are queued for sending
                tx = f.tx
                win = window_of(cc)
                paths = f.paths
                plane = f.plane
                last_psn = rec.npkts - 1
                n = 0
                parked = False
                if plane is None:
                    path = paths[0]
                else:
                    path = paths[plane.k]

                    def load(k: int, paths=paths) -> int:  # least-loaded: the port that frees up first
                        return port_next[paths[k].slot]
                slot = path.slot
                while n < burst and f.next_ns <= now:
                    if plane is not None and plane.due(now):
                        path = paths[plane.choose(now, load)]
                        slot = path.slot
                    if port_next[slot] > now:
                        break
                    if win is not None:
                        inflight = f.hi - (tx.acked_delivered if rel else f.rx.delivered)
                        if inflight >= win and (rel or now - f.last_progress_ns < grace_ns):
                            parked = rel
                            break
                    if packets >= cfg.max_packets:
                        limit_hit = True
                        break
                    psn = tx.take(now)
                    if psn is None:
                        parked = True
                        break
                    if plane is not None:  # a retransmission avoids the path its lost copy took
                        retx = psn < f.hi  # only reliable senders retransmit (and have an RTT estimate)
                        path = paths[plane.taken(psn, retx, now, tx.rtt.srtt if retx else 0, load)]
                        slot = path.slot
                    tpl = path.tail if psn == last_psn else path.tpl
                    buf = tpl.stamp(fid, psn, rec.npkts, now)
                    if plane is not None:
                        plane.stamp_entropy(buf, tpl.entropy_off)
                    try:
                        path.sock.send(buf)
                    except BlockingIOError:
                        if rel:
                            rec.tx_dropped += 1  # taken by the transport: it is lost, the transport repairs it
                        elif isinstance(tx, UnreliableSender):
                            tx.nxt -= 1  # unreliable: give the PSN back and try again shortly
                            tx.sent -= 1
                        f.next_ns = now + 20_000
                        break
                    except OSError as e:
                        if e.errno not in (errno.ENOBUFS, errno.ENETDOWN, errno.ENXIO):
                            raise
                        rec.tx_dropped += 1
                    if psn >= f.hi:
                        f.hi = psn + 1
                    rec.sent += 1
                    blen = len(buf)
                    rec.sent_bytes += blen
                    packets += 1
                    n += 1
                    if plane is not None:
                        plane.sent(now)
                    f.next_ns += int(blen * 8 * 1e9 / rate_of(cc, now / 1e9))
                    if port_ns_per_bit:
                        # token bucket: time lost to a slow loop turn may be caught up, `burst` frames deep
                        port_next[slot] = (max(port_next[slot], now - port_slack_ns)
                                           + int(blen * 8 * port_ns_per_bit))
                budget -= max(n, 1)
                if not rec.send_done_ns and f.hi >= rec.npkts:
                    rec.send_done_ns = now
                    rec.rate_cuts = cc.cuts
                if rel:
                    if tx.done:
                        if tx.failed and not rec.settle_ns:
                            settle(fid, now)
                    elif limit_hit:
                        push_timer(now + grace_ns, "grace", fid)
                    elif parked:
                        f.parked = True
                    else:
                        heapq.heappush(sendq, (max(f.next_ns, now, port_next[slot]), fid))
                    arm_tx(fid, f)
                elif tx.done:
                    if not f.rx.complete:
                        push_timer(now + grace_ns, "grace", fid)
                elif limit_hit:
                    rec.send_done_ns = now
                    push_timer(now + grace_ns, "grace", fid)
                elif win is not None and f.hi - f.rx.delivered >= win:
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
        finish_records(flows, colls, rel, self.payload, end)
        for ci in inc.collectives:
            if colls[ci].inc is None and colls[ci].start_ns:
                colls[ci].inc = inc.stats(ci)
        return RunResult([f.rec for f in flows], colls, (end - t0) / 1e9, packets, timed_out, limit_hit,
                         drops, receiver.foreign, cfg)
