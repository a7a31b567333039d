"""The host/NIC model, written once for both clocks: endpoints that replay planned collectives.

A plan becomes flows (one per transfer: frame templates, a transport sender and receiver, receive
accounting, a plane choice when the NIC sprays); each endpoint plane is a `NicPort` whose feedback frames go
first (the NIC's control queue) and whose ready flows then take turns, one frame at a time, at the port's
rate. Flows are paced by their congestion reaction (traffic/reaction.py), their transport
(traffic/transport) decides which PSN goes next, and retransmission and delayed-ACK timers, flow starts and
loss grace are events on a `Scheduler` (traffic/scheduler.py). Frames leave through a `FrameIO` and come
back to `receive`; the records are a `RunResult` that traffic/metrics.py writes.

Two things plug in, nothing else differs between the clocks: the scheduler (vfabric's virtual-time
`Simulator`, or traffic/realtime.py's monotonic clock) and the frame I/O (vfabric's link channels, or
AF_PACKET sockets in the hosts' namespaces: traffic/engine.py).

Under a reliable transport the receiver's ACKs, NAKs and CNPs are real frames: they leave the receiving NIC
port ahead of its data and are handed to the sender's state machine when they arrive. Under `none` a flow
whose last packet is sent but which misses packets is settled after `loss_grace_ns` (loss is counted, not
repaired), and congestion feedback (CE mark, path queue depth) reaches the sender in-process.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from math import floor
from typing import Any, Protocol, cast

from linklayer.attach import on_link_port
from p4src.wire import PRIO_CONTROL as PRIO_CONTROL_P4
from traffic.frames import FORMATS, PROBE, Addr, Template, entropy
from traffic.inc.endpoint import CallbackClock, IncEndpoints
from traffic.planes import PathHealth, PlaneChoice, flow_planes
from traffic.progress import FlowGraph, finish_records
from traffic.reaction import FlowCC, NoReaction, make_reaction
from traffic.receiver import FlowRx, RxAccounting
from traffic.records import (
    CollectiveRecord,
    FlowRecord,
    HostConfig,
    NicAddress,
    PlannedCollective,
    RunResult,
)
from traffic.scheduler import Handle, Scheduler
from traffic.transport import CNP, Receiver, RttEstimator, Sender, make_transport, reliable, transport_params

#: The priorities a NIC's frames travel at, as the fabric's P4 programs classify them (p4src/include/trim.p4):
#: data at 0, transport feedback (and trimmed headers) at the control priority. Link-level flow control pauses
#: or credits a NIC's frames by these.
PRIO_DATA = 0
PRIO_CONTROL = PRIO_CONTROL_P4
UNKNOWN_RATE_BPS = 1e9  # a port of unknown rate (an unpaced socket) times PFC quanta at this rate

#: How far ahead a NIC port may commit frames to its transmit pipeline when nothing but its turn decides
#: them (unpaced, unreliable, pinned flows, virtual time): 1 µs, ~32 full frames at 400 Gbit/s. A flow that
#: becomes ready meanwhile waits at most this long for its first turn.
TX_AHEAD_NS = 1000


class TxRefused(Exception):
    """The frame I/O could not take a frame (its queue stayed full): the frame is counted sent and lost."""


class FrameIO(Protocol):
    """Where one NIC port's frames go: `send` puts a frame on the wire starting at `start_ns` and returns when
    its last bit has left (the port is busy until then); `rate_bps` / `ns_per_byte` are the port's rate
    (ns_per_byte 0: no limit but the host's own speed)."""

    @property
    def rate_bps(self) -> float: ...

    @property
    def ns_per_byte(self) -> float: ...

    def send(self, frame: Any, start_ns: float) -> float: ...


class _Path:
    """One way a multi-path flow's data can go: a plane's NIC port at the source and at the destination."""

    __slots__ = ("nic", "rx_nic", "tpl", "tail", "fb_tpl", "wire_bits", "tail_wire_bits")

    def __init__(self, nic: NicPort, rx_nic: NicPort, tpl: Template, tail: Template, fb_tpl: Template | None,
                 wire_bits: int, tail_wire_bits: int) -> None:
        self.nic, self.rx_nic, self.tpl, self.tail, self.fb_tpl = nic, rx_nic, tpl, tail, fb_tpl
        self.wire_bits, self.tail_wire_bits = wire_bits, tail_wire_bits


class Flow:
    """Per-flow state touched per packet (slots; annotated for the type checker)."""

    __slots__ = ("fid", "rec", "nic", "tpl", "tail", "next_ns", "cc", "rx", "payload", "dst_ep", "src_ep",
                 "last_progress_ns", "wire_bits", "tail_wire_bits", "blocked", "queued", "tx", "trx", "hi",
                 "fb_tpl", "rx_nic", "tx_timer", "tx_handle", "rx_timer", "parked", "plane", "paths", "path_of_plane", "load")
    fid: int
    rec: FlowRecord
    nic: NicPort
    rx_nic: NicPort
    tpl: Template
    tail: Template
    fb_tpl: Template | None
    next_ns: float
    cc: FlowCC | None
    rx: FlowRx
    tx: Sender
    trx: Receiver
    payload: int
    dst_ep: int
    src_ep: int
    last_progress_ns: int
    wire_bits: int
    tail_wire_bits: int
    blocked: bool
    queued: bool
    parked: bool
    hi: int
    tx_timer: int
    tx_handle: Handle | None  # the pending transport timer event (cancelled when superseded or done)
    rx_timer: int
    # multi-path flows only (plane_policy other than pinned, more than one common plane); `nic`, `tpl`,
    # `tail`, `wire_bits` are then the current path's, `rx_nic`/`fb_tpl` those of the latest arrival
    plane: PlaneChoice | None
    paths: list[_Path]
    path_of_plane: dict[int, int]
    load: Callable[[int], float]


class NicPort:
    """One plane port of a host NIC: feedback frames first (the NIC's control queue), then the ready flows
    take turns, one frame at a time, at the port's rate."""

    __slots__ = ("sim", "channel", "busy_until", "ready", "scheduled", "engine", "ctrl", "slack_ns", "turn_frames",
                 "flow", "gate", "copy")

    def __init__(self, sim: Scheduler, channel: FrameIO, engine: Endpoints) -> None:
        self.sim = sim
        self.channel = channel
        self.engine = engine
        self.busy_until = 0.0
        self.ready: deque[Flow] = deque()
        self.ctrl: deque[bytes] = deque()
        self.scheduled = False
        self.copy = engine.copy_frames  # whether the frame I/O keeps the frames it is given
        cfg = engine.config
        # a port may start a frame this long in the past to catch up (a token bucket `catch_up_frames` deep)
        self.slack_ns = cfg.catch_up_frames * engine.frame_bytes(cfg.mtu + 14) * channel.ns_per_byte
        # frames one turn may send while the port stays free, before the scheduler's other work runs
        self.turn_frames = cfg.catch_up_frames or 1 << 62
        # link-level flow control (linklayer/): the port's PFC/CBFC state and its transmit gate; None: off
        self.flow: Any = None
        self.gate: Any = None

    def enable_flow(self, flow: Any) -> None:
        """Obey the peer's pauses or credits (linklayer.flow.PortFlow): every frame asks the gate first, and the
        frames' bytes are counted as they leave."""
        self.flow = flow
        self.gate = flow.gate
        self.channel = _GatedIO(self.channel, flow.gate, self.engine.frame_bytes)

    def wake(self) -> None:
        """The gate lets a held priority go again."""
        if not self.scheduled:
            self._kick()

    def make_ready(self, f: Flow) -> None:
        if f.queued:
            return
        f.queued = True
        self.ready.append(f)
        if not self.scheduled:
            self._kick()

    def backlog_ns(self, now: int) -> float:
        """How long a frame made ready now would wait on this port: the frame on the wire, then one MTU-sized
        frame per waiting flow or feedback frame (the local NIC queue a least-loaded plane choice reads)."""
        wait = ((len(self.ready) + len(self.ctrl)) * self.engine.frame_bytes(self.engine.config.mtu + 14)
                * self.channel.ns_per_byte)
        busy = self.busy_until
        return (busy - now if busy > now else 0.0) + wait

    def send_control(self, frame: bytes | bytearray) -> None:
        """A feedback frame (the NIC's control queue goes before data). `frame` may be a buffer the caller
        reuses: it is copied where it is kept (queued, or on a wire that keeps it: `copy_frames`).

        An idle port (not in a turn, no gate, free in this nanosecond) sends it at once, as `_transmit`
        would for a lone control frame, without the queue and the turn around it: this is every ACK of an
        uncongested port, the reliable transports' cost per feedback frame."""
        if self.scheduled or self.gate is not None or self.busy_until >= self.sim.now + 1:
            self.ctrl.append(bytes(frame))
            if not self.scheduled:
                self._kick()
            return
        self.scheduled = True  # what `_transmit` sets: a frame made ready from inside `send` only queues
        now = self.sim.now
        busy = self.busy_until  # `start_ns`, inlined
        lo = now - self.slack_ns if self.slack_ns else now
        start = busy if busy > lo else float(lo)
        try:
            self.busy_until = self.channel.send(bytes(frame) if self.copy else frame, start)
        except TxRefused:
            self.busy_until = start  # feedback is best effort, as on a NIC
        self.scheduled = False
        if self.ready or self.ctrl:
            self._kick()

    def start_ns(self, now: int) -> float:
        """When a frame handed over at `now` starts: after the one on the wire, or now (less the catch-up
        slack)."""
        busy = self.busy_until
        lo = now - self.slack_ns if self.slack_ns else now
        return busy if busy > lo else float(lo)

    def _kick(self) -> None:
        if self.scheduled or not (self.ready or self.ctrl):
            return
        busy = self.busy_until
        if busy < self.sim.now + 1:
            self._transmit()  # the port is free in this nanosecond: no event needed
            return
        self.scheduled = True
        self.sim.at(int(busy), self._transmit)

    def _transmit(self) -> None:
        """Send while the port is free within this nanosecond, then wait for it (frames start exactly where
        the previous one ended, in fractional ns). `scheduled` stays set meanwhile, so a flow made ready again
        from inside `send_one` only joins the queue.

        One event per frame, unless the endpoints allow a transmit-ahead window (`tx_ahead_ns`: unpaced,
        unreliable, pinned flows, whose next frame nothing but a newly ready flow could change): then the
        NIC commits the frames of the next `tx_ahead_ns` to its transmit pipeline in one event, each taken
        and stamped at the nanosecond it starts, exactly as one event per frame would; a flow made ready
        meanwhile gets its first turn after them. A port that stays free after a frame (no rate limit, or
        catching up) sends at most `turn_frames` in one turn, then lets the scheduler's other work run."""
        if self.gate is not None:
            self._transmit_gated()
            return
        self.scheduled = True
        sim = self.sim
        now = sim.now
        engine = self.engine
        horizon = now + engine.tx_ahead_ns
        if horizon > sim.until_ns:
            horizon = sim.until_ns
        ready, ctrl = self.ready, self.ctrl
        send_one = engine.send_one
        free_turns = 0
        while ctrl or ready:
            if ctrl:
                start = self.start_ns(now)
                try:
                    self.busy_until = self.channel.send(ctrl.popleft(), start)
                except TxRefused:
                    self.busy_until = start  # feedback is best effort, as on a NIC
            else:
                sent = False
                while ready:
                    f = ready.popleft()
                    f.queued = False
                    if send_one(f, self, now, horizon):
                        sent = True
                        break
                if not sent:
                    break
            busy = self.busy_until
            if busy >= now + 1:
                if not (ready or ctrl):
                    break
                nxt = floor(busy)  # (int() of a non-negative float, cheaper)
                if nxt <= horizon:  # within the transmit-ahead window: the next frame's turn is taken now
                    now = nxt
                    continue
                # the port's next turn: in the future by construction, posted unchecked
                sim.push((nxt, sim.next_place(), self._transmit, ()))
                return
            free_turns += 1
            if free_turns >= self.turn_frames and (ready or ctrl):
                # the port is still free: its next turn after the scheduler's other work
                sim.push((now + 1, sim.next_place(), self._transmit, ()))
                return
        self.scheduled = False


    def _transmit_gated(self) -> None:
        """`_transmit` under link-level flow control: one frame at a time, each only if the gate lets its
        priority go (feedback at the control priority, data at the data priority); a held port waits for
        `wake`."""
        self.scheduled = True
        sim, gate, ctrl, ready = self.sim, self.gate, self.ctrl, self.ready
        frame_bytes = self.engine.frame_bytes
        channel = cast("_GatedIO", self.channel)
        while ctrl or ready:
            now = sim.now
            busy = self.busy_until
            if busy >= now + 1:
                sim.push((int(busy), sim.next_place(), self._transmit, ()))
                return
            if ctrl and gate.may_send(PRIO_CONTROL, frame_bytes(len(ctrl[0]))):
                frame = ctrl.popleft()
                start = self.start_ns(now)
                channel.prio = PRIO_CONTROL
                try:
                    self.busy_until = channel.send(frame, start)
                except TxRefused:
                    self.busy_until = start
                finally:
                    channel.prio = PRIO_DATA
                continue
            if not ready or not gate.may_send(PRIO_DATA, ready[0].wire_bits >> 3):
                break
            sent = False
            while ready:
                f = ready.popleft()
                f.queued = False
                if self.engine.send_one(f, self, now):
                    sent = True
                    break
            if not sent:
                break
        self.scheduled = False


class _GatedIO:
    """A NIC port's frame I/O under flow control: every frame it takes is told to the port's gate (CBFC counts
    its cells), whoever sends it — the port's own turn or a sprayed flow's retransmission choosing this port
    (which, limitation, does not ask the gate first). `prio`: the priority of the frame being sent."""

    __slots__ = ("io", "gate", "frame_bytes", "prio")

    def __init__(self, io: FrameIO, gate: Any, frame_bytes: Callable[[int], int]) -> None:
        self.io = io
        self.gate = gate
        self.frame_bytes = frame_bytes
        self.prio = PRIO_DATA

    @property
    def rate_bps(self) -> float:
        return self.io.rate_bps

    @property
    def ns_per_byte(self) -> float:
        return self.io.ns_per_byte

    def send(self, frame: Any, start_ns: float) -> float:
        end = self.io.send(frame, start_ns)
        self.gate.sent(self.prio, self.frame_bytes(len(frame)))
        return end

    def __getattr__(self, name: str) -> Any:
        return getattr(self.io, name)


class Endpoints:
    """All endpoints of a run on one scheduler. `attach(eid, plane, io)` gives a NIC port its frame I/O; the
    frames that arrive are handed to `receive((wire, eid, plane), frame)`, where `wire.up` / `wire.lost` tell
    whether the wire went down while the frame was on it. `frame_bytes(n)`: bytes an n-byte frame costs its
    port and pacer (on a simulated wire with preamble, FCS and gap; on a socket the frame alone).
    `count_strays`: whether frames of no flow of this run (kernel chatter, flooded copies, another endpoint's
    frames) count as foreign — on a simulated fabric they are a fault, on a real NIC everyday life.
    `open_io(key)`: frame I/O for a port the plan uses that was not attached beforehand. `copy_frames`: whether
    a sent frame must be copied from its template's buffer (a simulated wire keeps it; a socket copies it)."""

    def __init__(self, sim: Scheduler, ports: dict[tuple[int, int], NicAddress], config: HostConfig | None = None,
                 frame_bytes: Callable[[int], int] = lambda n: n, count_strays: bool = True,
                 open_io: Callable[[tuple[int, int]], FrameIO] | None = None, copy_frames: bool = True) -> None:
        self.sim = sim
        self.open_io = open_io
        self.copy_frames = copy_frames
        self.config = config or HostConfig()
        self.frame_bytes = frame_bytes
        self.count_strays = count_strays
        if self.config.frame_format not in FORMATS:
            raise ValueError(f"unknown frame format {self.config.frame_format!r}; known: {', '.join(FORMATS)}")
        self.fmt = FORMATS[self.config.frame_format]
        self.parse = self.fmt.parse  # the format's receive-side parser (one look-up per frame less)
        self.payload = self.fmt.payload_per_packet(self.config.mtu)
        if self.payload < PROBE.size:
            raise ValueError(f"MTU {self.config.mtu} leaves no room for the probe record")
        self.tparams = transport_params(**(self.config.transport_params or {}))
        if self.config.plane_policy not in ("pinned", "round-robin", "least-loaded"):
            raise ValueError(f"unknown plane policy {self.config.plane_policy!r}; known: pinned, round-robin, "
                             "least-loaded")
        self.reliable = reliable(self.config.transport)  # also checks the name
        self.ports = ports
        self.nics: dict[tuple[int, int], NicPort] = {}
        self._planes: dict[int, list[int]] = {}
        for ep, plane in sorted(self.ports):
            self._planes.setdefault(ep, []).append(plane)
        self.flows: list[Flow] = []
        self.colls: list[CollectiveRecord] = []
        self.receiver = RxAccounting()
        self.packets = 0
        self.limit_hit = False
        self.max_packets = self.config.max_packets  # (read per frame)
        self.foreign = 0
        self.graph: FlowGraph | None = None
        self.inc: IncEndpoints | None = None  # in-network all-reduce collectives of the plan (traffic/inc)
        self.tx_ahead_ns = 0  # set by `load`
        # flows this process simulates (None: all); the others belong to another partition worker
        # (vfabric/partition.py) and are never started here
        self.only: bytearray | None = None
        self._templates: dict = {}  # frame templates by (src, dst, payload) and their bases
        # flows loaded whose templates are not built: (flow, source, destination, tail bytes, gateways)
        self._unbuilt: list[tuple[int, Addr, Addr, int, str | None, str | None]] = []
        self._pair_key: tuple[Addr, Addr] | None = None  # the endpoint pair whose frames `_pair_frames` holds
        self._pair_frames: dict[int, Template] = {}  # by payload size

    @property
    def unsettled(self) -> int:
        """Flows not yet settled (0 before a plan is loaded)."""
        return self.graph.unsettled if self.graph is not None else 0

    def attach(self, eid: int, plane: int, io: FrameIO) -> NicPort:
        nic = self.nics[(eid, plane)] = NicPort(self.sim, io, self)
        return nic

    def _nic(self, key: tuple[int, int]) -> NicPort:
        """The NIC port of `key`, attached now through `open_io` if the plan is the first to use it."""
        nic = self.nics.get(key)
        if nic is None:
            if self.open_io is None:
                raise KeyError(f"endpoint {key[0]} plane {key[1]} has no NIC port attached")
            nic = self.attach(key[0], key[1], self.open_io(key))
        return nic

    def _port_key(self, endpoint: int, plane: int) -> tuple[int, int]:
        planes = self._planes.get(endpoint)
        if not planes:
            raise KeyError(f"endpoint {endpoint} has no port")
        return (endpoint, plane if plane in planes else planes[plane % len(planes)])

    # ---------------------------------------------------------------- plan
    def load(self, plan: Sequence[PlannedCollective], start_ns: int | None = 0) -> None:
        """Expand the plan into flows and (`start_ns` given) schedule the collectives that wait for nothing."""
        cfg = self.config
        self.plan = list(plan)
        templates = self._templates
        rtts: dict[tuple[int, int], RttEstimator] = {}  # one per endpoint pair, like a NIC's per-peer state
        health: dict[tuple[int, int, int], PathHealth] = {}
        for pc in self.plan:
            s = pc.schedule
            crec = CollectiveRecord(pc.name, pc.iteration, s.kind, s.algorithm, s.size, s.ranks)
            self.colls.append(crec)
            for t in s.transfers:
                f = Flow()
                skey, dkey = self._port_key(t.src, t.plane), self._port_key(t.dst, t.plane)
                src, dst = self.ports[skey], self.ports[dkey]
                npkts = t.packets(self.payload)
                fid = len(self.flows)
                f.fid = fid
                f.rec = FlowRecord(fid, pc.key, t.id, t.src, t.dst, t.plane, t.bytes, npkts)
                f.nic = self._nic(skey)
                f.rx_nic = self._nic(dkey)
                a_src, a_dst = Addr(src.mac, src.ip, t.src, t.plane), Addr(dst.mac, dst.ip, t.dst, t.plane)
                tail_len = t.bytes - (npkts - 1) * self.payload
                # frame templates: `build_templates`
                self._unbuilt.append((fid, a_src, a_dst, tail_len, src.gateway_mac, dst.gateway_mac))
                f.payload = tail_len
                f.dst_ep = t.dst
                f.src_ep = t.src
                f.cc = None
                f.next_ns = 0.0
                f.last_progress_ns = 0
                f.blocked = f.queued = f.parked = False
                f.hi = 0
                f.tx_timer = f.rx_timer = 0
                f.tx_handle = None
                pair = (t.src, t.dst)
                if pair not in rtts:
                    rtts[pair] = RttEstimator(self.tparams)
                f.tx, f.trx = make_transport(cfg.transport, npkts, self.tparams, rtts[pair])
                f.plane = None
                planes = flow_planes(cfg.plane_policy, self._planes.get(t.src, []), self._planes.get(t.dst, []),
                                     t.plane)
                if len(planes) > 1:
                    self._add_paths(f, planes, templates, tail_len, health)
                f.rx = self.receiver.expect(fid, npkts)
                crec.flows.append(fid)
                self.flows.append(f)
        rate = cfg.flow_rate_bps or max((n.channel.rate_bps for n in self.nics.values()), default=1e9)
        self.reaction: NoReaction = make_reaction(cfg.reaction, rate, **(cfg.reaction_params or {}))
        self.unpaced = self.reaction.name == "none" and cfg.flow_rate_bps is None  # NIC line rate only
        # what the reaction does per frame, looked up once (a method it does not override is the no-op one)
        kind = type(self.reaction)
        self.windowed = kind.window is not NoReaction.window
        self.reacts = kind.on_delivery is not NoReaction.on_delivery
        self.hpcc = self.reaction.name == "hpcc"  # reads the path queue depth of every acknowledged packet
        self.rate_fixed = kind.rate_bps is NoReaction.rate_bps
        self.flow_rate_bps = cfg.flow_rate_bps
        # real time (`catch_up_frames`): a paced flow that a late turn (a busy or descheduled process) held
        # back makes up for all of it, `catch_up_frames` per turn, so it keeps its rate over the flow; and a
        # rate-limited port catches up a token bucket `catch_up_frames` deep (NicPort.start_ns)
        self.catch_up = cfg.catch_up_frames > 0
        # flows whose next frame depends on nothing but the NIC's turn may be sent ahead (NicPort._transmit)
        self.tx_ahead_ns = (TX_AHEAD_NS if self.unpaced and not self.reliable and cfg.plane_policy == "pinned"
                            and not cfg.catch_up_frames else 0)
        sim = self.sim
        self.graph = FlowGraph(self.plan, self.colls, [f.rec for f in self.flows],
                               lambda when, fid: sim.at(when, self._start_flow, fid),
                               lambda when, ci: sim.at(when, self._start_collective, ci))
        inc = IncEndpoints(self.plan, sorted({pl for _ep, pl in self.ports}), CallbackClock(sim.now_ns, sim.at),
                           self._inc_send, self._inc_finish)
        if inc:
            self.inc = inc
            self.graph.on_external = inc.start
            for spec in inc.jobs():  # every member's port of the job's plane listens
                for eid in spec.members:
                    self._nic(self._port_key(eid, spec.plane))
        # flows of one endpoint pair one after another, for `build_templates`: `_template` keeps the readdressed
        # frames of one pair only (all-to-all at UPN 512 has 262,144 pairs of one flow each, each frame 4 KiB).
        # Sorted here, before a split forks, rather than in each process (where touching every entry costs
        # copy-on-write faults: 0.36 s per process against 0.15 s once).
        self._unbuilt.sort(key=lambda u: (u[1].endpoint, u[1].plane, u[2].endpoint, u[2].plane, u[0]))
        if start_ns is not None:
            self.graph.begin(start_ns)

    def begin(self, start_ns: int) -> None:
        """Schedule the loaded plan's collectives that wait for nothing (after `load(plan, None)`)."""
        assert self.graph is not None  # loaded
        self.graph.begin(start_ns)

    def build_templates(self, fids: Sequence[int] | None = None) -> None:
        """The frame templates of the loaded flows (`fids`: only those, for a partition worker, which never
        sends the others' frames; None: all). Separate from `load` so that each worker builds only its own:
        at UPN 512 they are most of the load time and memory (a 4-KiB frame per flow)."""
        want = None if fids is None else set(fids)
        templates, payload, frame_bytes = self._templates, self.payload, self.frame_bytes
        for fid, a_src, a_dst, tail_len, gw_src, gw_dst in self._unbuilt:
            if want is not None and fid not in want:
                continue
            f = self.flows[fid]
            f.tpl = self._template(templates, a_src, a_dst, fid, payload, gw_src)
            f.tail = (f.tpl if tail_len == payload else
                      self._template(templates, a_src, a_dst, fid, tail_len, gw_src))
            f.fb_tpl = self._feedback_template(templates, a_dst, a_src, fid, gw_dst) if self.reliable else None
            f.wire_bits = frame_bytes(len(f.tpl.buf)) * 8
            f.tail_wire_bits = frame_bytes(len(f.tail.buf)) * 8
        self._unbuilt = []

    def _add_paths(self, f: Flow, planes: list[int], templates: dict, tail_len: int,
                   health: dict[tuple[int, int, int], PathHealth]) -> None:
        """A flow the NIC sprays over `planes` (the first is the schedule's): one path per plane, and the
        shared plane-choice model (traffic/planes.py) that picks among them."""
        cfg = self.config
        f.paths = []
        f.path_of_plane = {}
        frame_bytes = self.frame_bytes
        for plane in planes:
            skey, dkey = self._port_key(f.src_ep, plane), self._port_key(f.dst_ep, plane)
            src, dst = self.ports[skey], self.ports[dkey]
            a_src, a_dst = Addr(src.mac, src.ip, f.src_ep, plane), Addr(dst.mac, dst.ip, f.dst_ep, plane)
            gw = src.gateway_mac
            tpl = self._template(templates, a_src, a_dst, f.fid, self.payload, gw)
            tail = (tpl if tail_len == self.payload else
                    self._template(templates, a_src, a_dst, f.fid, tail_len, gw))
            fb = self._feedback_template(templates, a_dst, a_src, f.fid, dst.gateway_mac) if self.reliable else None
            f.path_of_plane[skey[1]] = len(f.paths)
            f.paths.append(_Path(self._nic(skey), self._nic(dkey), tpl, tail, fb, frame_bytes(len(tpl.buf)) * 8,
                                 frame_bytes(len(tail.buf)) * 8))
        key = (f.src_ep, f.dst_ep, len(planes))
        if key not in health:
            health[key] = PathHealth(len(planes))
        f.plane = PlaneChoice(cfg.plane_policy, len(planes), f.rec.npkts, health[key], self.tparams.rto_ns,
                              entropy(f.fid), cfg.spray_unit, cfg.flowlet_gap_ns)
        paths, sim = f.paths, self.sim
        f.load = lambda k: paths[k].nic.backlog_ns(sim.now)

    @staticmethod
    def _use_path(f: Flow, k: int) -> None:
        p = f.paths[k]
        f.nic, f.tpl, f.tail, f.wire_bits, f.tail_wire_bits = p.nic, p.tpl, p.tail, p.wire_bits, p.tail_wire_bits

    def _ready(self, f: Flow) -> None:
        """Queue the flow at its NIC port; a multi-path flow first picks the plane of its next packet."""
        plane = f.plane
        if plane is not None and not f.queued and plane.used and plane.due(self.sim.now):
            self._use_path(f, plane.choose(self.sim.now, f.load))
        f.nic.make_ready(f)

    def _template(self, cache: dict, src: Addr, dst: Addr, flow: int, payload: int,
                  gateway: str | None) -> Template:
        """The data frame of `flow`: one Scapy build per payload size (`cache`), readdressed once per endpoint
        pair (kept while the same pair asks again), retargeted per flow. (The gateway is the source's.)"""
        if self._pair_key != (src, dst):
            self._pair_key, self._pair_frames = (src, dst), {}
        pair = self._pair_frames.get(payload)
        if pair is None:
            base = cache.get(payload)
            if base is None:
                base = cache[payload] = self.fmt.build(src, dst, flow, payload, self.config.ecn, gateway)
            pair = self._pair_frames[payload] = self.fmt.for_pair(base, src, dst, gateway)
        return self.fmt.for_flow(pair, flow)

    def _feedback_template(self, cache: dict, src: Addr, dst: Addr, flow: int, gateway: str | None) -> Template:
        key = ("fb", src, dst)
        pair = cache.get(key)
        if pair is None:
            base = cache.get("fb")
            if base is None:
                base = cache["fb"] = self.fmt.build_feedback(src, dst, flow, gateway)
            pair = cache[key] = self.fmt.for_pair(base, src, dst, gateway)
        return self.fmt.for_flow(pair, flow)

    # ---------------------------------------------------------------- collectives and flows
    def _start_collective(self, ci: int) -> None:
        assert self.graph is not None  # loaded
        self.graph.start_collective(ci, self.sim.now)

    def _start_flow(self, fid: int) -> None:
        if self.only is not None and not self.only[fid]:
            return
        now = self.sim.now
        f = self.flows[fid]
        f.rec.start_ns = now
        if self.limit_hit:
            f.rec.send_done_ns = now
            self._settle(fid)
            return
        rate = self.flow_rate_bps or f.nic.channel.rate_bps
        f.cc = self.reaction.start(now / 1e9)
        f.cc.rate_bps = f.cc.target_bps = rate
        f.next_ns = float(now)
        f.last_progress_ns = now
        self._ready(f)

    def _settle(self, fid: int) -> None:
        assert self.graph is not None  # loaded
        self.graph.settle(fid, self.sim.now)

    def _grace(self, fid: int) -> None:
        if not self.flows[fid].rec.settle_ns:
            self._settle(fid)

    # ---------------------------------------------------------------- transport timers
    def _arm_tx(self, f: Flow) -> None:
        """The sender's timer as an event (a cancellable one: it is superseded by an earlier one, or the flow
        finishes, and most flows finish long before their retransmission timeout). A finished sender's timer
        would change nothing, so a finished sender has none."""
        t = f.tx.next_timer()
        if t is not None and (not f.tx_timer or t < f.tx_timer) and not f.tx.done:
            f.tx_timer = t = max(t, self.sim.now)
            old = f.tx_handle
            if old is not None:
                old.cancel()
            f.tx_handle = self.sim.call_at(t, self._tx_timer, f.fid, t)

    @staticmethod
    def _disarm_tx(f: Flow) -> None:
        """A finished sender's pending timer: it would change nothing, so it leaves the event heap."""
        h = f.tx_handle
        if h is not None:
            h.cancel()
            f.tx_handle = None
        f.tx_timer = 0

    def _tx_timer(self, fid: int, t: int) -> None:
        f = self.flows[fid]
        if f.tx_timer != t:
            return  # superseded by an earlier one
        f.tx_timer = 0
        f.tx_handle = None  # (fired)
        now = self.sim.now
        f.tx.on_timer(now)
        if f.tx.failed:
            self._settle(fid)
            return
        self._unpark(f)
        self._arm_tx(f)

    def _arm_rx(self, f: Flow) -> None:
        t = f.trx.next_timer()
        if t is not None and (not f.rx_timer or t < f.rx_timer):
            f.rx_timer = t = max(t, self.sim.now)
            self.sim.at(t, self._rx_timer, f.fid, t)

    def _rx_timer(self, fid: int, t: int) -> None:
        f = self.flows[fid]
        if f.rx_timer != t:
            return
        f.rx_timer = 0
        fbs = f.trx.on_timer(self.sim.now)
        if fbs:
            self._send_feedback(f, fbs)
        self._arm_rx(f)

    def _unpark(self, f: Flow) -> None:
        if f.parked and not f.tx.done:
            f.parked = False
            self._ready(f)

    def _send_feedback(self, f: Flow, fbs: list) -> None:
        """ACK/NAK/CNP frames from the flow's receiving NIC port back to its sender, through the fabric."""
        rec = f.rec
        tpl = f.fb_tpl
        nic = f.rx_nic
        fid = f.fid
        assert tpl is not None  # reliable transports always have one
        for fb in fbs:
            nic.send_control(tpl.stamp_feedback(fid, fb))  # (copied by the NIC where it is kept)
            rec.feedback_sent += 1
            self.packets += 1

    # ---------------------------------------------------------------- send
    def send_one(self, f: Flow, nic: NicPort, now: int, horizon: int = -1) -> bool:
        """Called by the NIC when the port is free at `now` (the current instant, or one within its
        transmit-ahead window) and `f` is at the head: send one frame, or say why not (False: the flow is
        waiting for pacing time, window, feedback or a timer, and will be made ready again by it).

        A train (`horizon`, the end of the NIC's transmit-ahead window): while `f` is the only one waiting at
        its port and the port frees again by `horizon`, its next frame follows in this call, at the whole ns
        the port frees — what the NIC's turn would do next with one call per frame (pop `f` again, call this
        at that instant), so every frame, event and record is the same; only the calls between are saved."""
        rec = f.rec
        tx = f.tx
        reliable = self.reliable
        sim = self.sim
        cc = f.cc
        reaction = self.reaction
        windowed, max_packets, copy, catch_up = self.windowed, self.max_packets, self.copy_frames, self.catch_up
        sent = False
        while True:
            if tx.done or rec.settle_ns and not reliable:
                return sent
            if f.next_ns >= now + 1:
                sim.at(int(f.next_ns), self._wake, f.fid)
                return sent
            assert cc is not None  # set when the flow started
            if windowed:
                win = reaction.window(cc)
                if win is not None:
                    if reliable:
                        if f.hi - tx.acked_delivered >= win:
                            f.parked = True
                            return sent
                    elif f.hi - f.rx.delivered >= win and now - f.last_progress_ns < self.config.loss_grace_ns:
                        f.blocked = True
                        sim.at(f.last_progress_ns + self.config.loss_grace_ns, self._wake, f.fid)
                        return sent
            if self.packets >= max_packets:
                self.limit_hit = True
                if not rec.send_done_ns:
                    rec.send_done_ns = now
                sim.at(now + self.config.loss_grace_ns, self._grace, f.fid)
                return sent
            psn = tx.take(now)
            if psn is None:  # window full or nothing to (re)send: feedback or a timer wakes the flow
                f.parked = True
                if reliable:
                    self._arm_tx(f)
                return sent
            npkts = rec.npkts
            last = psn == npkts - 1
            plane = f.plane
            if plane is not None:  # a retransmission avoids the path its lost copy took: maybe another port
                retx = psn < f.hi  # only reliable senders retransmit (and have an RTT estimate)
                srtt = tx.rtt.srtt if retx else 0  # type: ignore[attr-defined]
                self._use_path(f, plane.taken(psn, retx, now, srtt, f.load))
                nic = f.nic
            tpl = f.tail if last else f.tpl
            buf = tpl.stamp(f.fid, psn, npkts, now)
            if plane is not None:
                plane.stamp_entropy(buf, tpl.entropy_off)
                plane.sent(now)
            frame = bytes(buf) if copy else buf
            # Back to back: start where the previous frame ended (fractional ns), not at the whole ns the event
            # was rounded to, or every frame would lose up to 1 ns (0.8 % of a 1.5 kB frame at 400 Gbit/s).
            if catch_up:
                start = nic.start_ns(now)
            else:
                busy = nic.busy_until
                start = busy if busy > now else float(now)
            try:
                end = nic.channel.send(frame, start)
            except TxRefused:
                rec.tx_dropped += 1  # counted as sent and lost: a reliable transport repairs it
                end = start
            nic.busy_until = end
            if psn >= f.hi:
                f.hi = psn + 1
            rec.sent += 1
            rec.sent_bytes += len(frame)
            self.packets += 1
            bits = f.tail_wire_bits if last else f.wire_bits
            nxt = f.next_ns
            f.next_ns = nxt = (nxt if nxt > start or catch_up else start) + bits * 1e9 / (
                cc.rate_bps if self.rate_fixed else reaction.rate_bps(cc, now / 1e9))
            if not rec.send_done_ns and f.hi >= npkts:
                rec.send_done_ns = now
                rec.rate_cuts = cc.cuts
            if reliable:
                t = tx.next_timer()  # `_arm_tx`, inlined: once per frame
                if t is not None and (not f.tx_timer or t < f.tx_timer):
                    self._arm_tx(f)
            if tx.done:
                if not reliable and not f.rx.complete:
                    sim.at(now + self.config.loss_grace_ns, self._grace, f.fid)
            elif nxt < end + 1:
                if plane is None:  # `nic.make_ready(f)` without its kick: only `NicPort._transmit` calls send_one
                    if now + 1 <= end < horizon + 1 and not nic.ready and not nic.ctrl:
                        now = floor(end)  # the train's next frame: `f` alone would be popped again right then
                        sent = True
                        continue
                    if not f.queued:
                        f.queued = True
                        nic.ready.append(f)
                else:
                    self._ready(f)
            else:
                sim.at(int(nxt), self._wake, f.fid)
            return True

    def _wake(self, fid: int) -> None:
        f = self.flows[fid]
        f.blocked = False
        if not f.tx.done and not (f.rec.settle_ns and not self.reliable):
            self._ready(f)

    # ---------------------------------------------------------------- in-network all-reduce (traffic/inc)
    def _inc_send(self, eid: int, plane: int, frame: bytes) -> None:
        self._nic(self._port_key(eid, plane)).send_control(frame)
        self.packets += 1

    def _inc_finish(self, ci: int) -> None:
        assert self.graph is not None and self.inc is not None
        self.colls[ci].inc = self.inc.stats(ci)
        self.graph.finish_external(ci, self.sim.now)

    # ---------------------------------------------------------------- receive
    def attach_flow(self, nic: NicPort, port: Any, cfg: Any, mac: bytes, rate_bps: float = 0.0) -> None:
        """PFC/CBFC (`cfg`, a linklayer.LinkLayerConfig) on a NIC port through its link layer (`port`, the
        linklayer.LinkPort the NIC sends on): the NIC obeys the switch's pauses or credits; what it receives is
        consumed at once (the host's memory is its buffer), so it never pauses and returns CBFC credits right
        away. Both clocks call this. `rate_bps`: the link's rate (PFC's quanta are its bit times; the switch at the
        other end must time them alike), by default the port's own."""
        rate = rate_bps or nic.channel.rate_bps or UNKNOWN_RATE_BPS
        pf = on_link_port(cfg, port, self.sim, rate, mac, nic.wake, host=True)
        if pf is None:
            return
        nic.enable_flow(pf)
        frame_bytes, priority = self.frame_bytes, self.frame_priority
        port.rx_listeners.append(lambda frame: pf.consumed(priority(frame), frame_bytes(len(frame))))

    def close_flows(self) -> None:
        """Count open pauses and credit stalls of the NIC ports up to now (into their LinkCounters)."""
        for nic in self.nics.values():
            if nic.flow is not None:
                nic.flow.close()

    def frame_priority(self, frame: bytes) -> int:
        """The priority a received frame travelled at (link-level flow control accounts it there): transport
        feedback and trimmed headers at the control priority, everything else at the data priority."""
        p = self.parse(frame)
        return PRIO_CONTROL if p is not None and (p.feedback is not None or p.trimmed) else PRIO_DATA

    def receive(self, at: tuple[Any, int, int], frame: bytes) -> None:
        """A frame's last bit reached endpoint `eid`'s port of `plane` over `wire` (`at`); lost if the wire
        went down while the frame was on it."""
        wire, eid, plane = at
        if not wire.up:
            wire.lost += 1
            return
        p = self.parse(frame)
        if p is None or p.flow >= len(self.flows):
            if p is None and self.inc is not None and self.inc.on_frame(eid, frame):
                return
            self.foreign += 1
            return
        f = self.flows[p.flow]
        now = self.sim.now
        fb = p.feedback
        if fb is not None:  # an ACK/NAK/CNP back at the sender
            if f.src_ep != eid or f.cc is None:
                self.foreign += 1
                return
            f.rec.feedback_received += 1
            tx = f.tx
            newly = tx.on_feedback(fb, now)
            if fb[0] == CNP:  # (the kind)
                self.reaction.on_delivery(f.cc, True, -1, now / 1e9)
            elif newly:
                f.last_progress_ns = now
                if self.hpcc:
                    for _k in range(newly):
                        self.reaction.on_delivery(f.cc, False, fb.qdepth, now / 1e9)
            if tx.done:
                if tx.failed:
                    self._settle(p.flow)
                if f.tx_handle is not None:
                    self._disarm_tx(f)
                return
            if f.parked:
                self._unpark(f)
            t = tx.next_timer()  # `_arm_tx`, inlined: once per ACK
            if t is not None and (not f.tx_timer or t < f.tx_timer):
                self._arm_tx(f)
            return
        if f.dst_ep != eid:
            self.foreign += 1
            return
        if self.reliable:
            if p.npkts != f.rx.npkts:
                self.receiver.foreign += 1
                return
            trx = f.trx
            if f.plane is not None:  # feedback leaves by the port the latest data came in on
                k = f.path_of_plane.get(plane)
                if k is not None:
                    f.rx_nic, f.fb_tpl = f.paths[k].rx_nic, f.paths[k].fb_tpl
            fbs = trx.on_data(p.seq, now, p.trimmed, p.ce, p.qdepth, p.tx_ns)
            if not p.trimmed:
                f.rx.on_wire(p)  # wire statistics only: delivery is the transport receiver's
            if fbs:
                self._send_feedback(f, fbs)
            if not f.rx_timer:
                self._arm_rx(f)
            if trx.delivered >= trx.npkts and not f.rec.settle_ns:
                self._settle(p.flow)
            return
        rx = f.rx  # what RxAccounting.on_frame would look up by flow id
        if rx.npkts != p.npkts:
            self.receiver.foreign += 1
            return
        rx.on_packet(p, now)
        f.last_progress_ns = now
        if f.cc is not None:
            if self.reacts:
                self.reaction.on_delivery(f.cc, p.ce, p.qdepth, now / 1e9)
            if f.blocked:
                win = self.reaction.window(f.cc)
                if win is None or f.hi - rx.delivered < win:
                    f.blocked = False
                    self._ready(f)
        if rx.delivered == rx.npkts and not f.rec.settle_ns:  # (`rx.complete`, inlined)
            self._settle(p.flow)

    # ---------------------------------------------------------------- result
    def result(self, duration_ns: int, timed_out: bool, config: HostConfig, end_ns: int | None = None,
               rx_socket_drops: int = 0) -> RunResult:
        end = self.sim.now if end_ns is None else end_ns
        finish_records(self.flows, self.colls, self.reliable, self.payload, end)
        if self.inc is not None:
            for ci in self.inc.collectives:
                if self.colls[ci].inc is None and self.colls[ci].start_ns:
                    self.colls[ci].inc = self.inc.stats(ci)
        foreign = self.receiver.foreign + (self.foreign if self.count_strays else 0)
        return RunResult([f.rec for f in self.flows], self.colls, duration_ns / 1e9, self.packets, timed_out,
                         self.limit_hit, rx_socket_drops, foreign, config)
