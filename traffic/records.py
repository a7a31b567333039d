"""What the replay engine consumes (ports, planned collectives, configuration) and what it produces (per-flow
and per-collective records). Plain data, shared by the engine, the metrics and the experiment runner."""

from __future__ import annotations

from dataclasses import dataclass, field

from traffic.schedule import Schedule

# How a NIC picks one of its planes per packet, and what unit it sprays (HostConfig.plane_policy/spray_unit).
PLANE_POLICIES = ("pinned", "round-robin", "least-loaded")
SPRAY_UNITS = ("packet", "flowlet")

@dataclass(frozen=True)
class NicAddress:
    """Where one plane of one endpoint lives. `gateway_mac`: destination MAC for frames sent from here
    (the first-hop switch's MAC when it routes); None sends straight to the peer's MAC."""

    netns: str | None
    ifname: str
    mac: str
    ip: str
    gateway_mac: str | None = None


@dataclass(frozen=True)
class PlannedCollective:
    """One collective instance to replay. It starts `delay_s` (a compute gap) after every collective in
    `after` has finished, and never before `start_s` from the run's start."""

    name: str
    iteration: int
    schedule: Schedule
    start_s: float = 0.0
    after: tuple[tuple[str, int], ...] = ()
    delay_s: float = 0.0

    @property
    def key(self) -> tuple[str, int]:
        return (self.name, self.iteration)


#: What `burst` (HostConfig.catch_up_frames) is when a user leaves it out: a real-time host that fell behind
#: its pacing schedule may send this many frames back to back.
DEFAULT_BURST = 8


def ns(seconds: float, name: str = "time") -> int:
    """Seconds as the host model's integer nanoseconds: the one conversion, made where a user's value enters
    (spec, command line). ValueError (naming `name`) for what is not a finite number."""
    if seconds != seconds or seconds in (float("inf"), float("-inf")):
        raise ValueError(f"{name} must be a finite number of seconds, got {seconds!r}")
    return int(round(seconds * 1e9))


@dataclass
class HostConfig:
    """A run's host/NIC options, whatever the clock; times in ns, rates in bit/s. Users write seconds and
    Mbit/s: the spec and the command line convert them once (`ns`), a clock then changes only what is its own
    (the virtual clock: ethlab/experiment/virtual_trial.py `virtual_host_changes`).

    `flow_rate_bps` None: each flow may send at its NIC port's rate (the NIC then shares the port among its
    flows); `port_rate_bps` caps a real-time port's sockets (None: as fast as the host sends). Reaction
    parameters default to the published constants in traffic/reaction.py. `catch_up_frames` (the spec's
    `burst`): how many frames a flow or a port may send back to back to make up for time lost to a late turn
    (real time; virtual time is never late: 0, and flows then never catch up either). `time_limit_ns` and
    `send_batch` bound a real-time run (the virtual clock has its own limits: vfabric/run.py)."""

    frame_format: str = "roce"
    mtu: int = 1500  # IP MTU; payload per frame = mtu - 44 for RoCEv2
    ecn: bool = True
    reaction: str = "none"
    reaction_params: dict = field(default_factory=dict)
    flow_rate_bps: float | None = None  # per-flow pacing rate (bits of frame per second)
    port_rate_bps: float | None = None  # cap on all flows leaving one port together (NIC line rate)
    loss_grace_ns: int = 1_000_000
    max_packets: int = 50_000_000
    transport: str = "none"  # none (unreliable), rc-gbn, sr: see traffic/transport
    transport_params: dict = field(default_factory=dict)  # TransportParams keys (times also as *_s)
    plane_policy: str = "pinned"  # pinned | round-robin | least-loaded (traffic/planes.py)
    spray_unit: str = "packet"  # packet | flowlet: how often a spraying NIC may pick a new plane/entropy
    flowlet_gap_ns: int = 100_000  # a new flowlet after this much silence (spray_unit flowlet)
    catch_up_frames: int = 0
    time_limit_ns: int = 30_000_000_000
    send_batch: int = 32  # packets sent per loop turn before the sockets are read again (real time)

    def validate(self) -> HostConfig:
        """Raise ValueError (one clear sentence) for anything the hosts could not run with; checked before
        any fabric comes up, so a typo costs a second, not a bring-up."""
        from traffic.frames import FORMATS, PROBE
        from traffic.reaction import make_reaction
        from traffic.transport import check_name, transport_params

        def positive(name: str, value: object, allow_zero: bool = False) -> None:
            ok = isinstance(value, int | float) and not isinstance(value, bool) and (
                value >= 0 if allow_zero else value > 0)
            if not ok or value != value or value == float("inf"):
                raise ValueError(f"{name} must be a {'non-negative' if allow_zero else 'positive'} finite number, "
                                 f"got {value!r}")

        if self.frame_format not in FORMATS:
            raise ValueError(f"unknown frame format {self.frame_format!r}; known: {', '.join(FORMATS)}")
        fmt = FORMATS[self.frame_format]
        low = fmt.l3_overhead + PROBE.size
        if not isinstance(self.mtu, int) or isinstance(self.mtu, bool) or not low <= self.mtu <= 9216:
            raise ValueError(f"MTU must be an integer from {low} (headers + ethlab's probe record) to 9216, "
                             f"got {self.mtu!r}")
        if self.flow_rate_bps is not None:
            positive("rate (rate_mbps)", self.flow_rate_bps)
        if self.port_rate_bps is not None:
            positive("port rate (port_rate_mbps)", self.port_rate_bps)
        positive("time limit (ns)", self.time_limit_ns)
        positive("loss grace (ns)", self.loss_grace_ns, allow_zero=True)
        positive("flowlet gap (ns)", self.flowlet_gap_ns)
        for name, least in (("max_packets", 1), ("send_batch", 1), ("catch_up_frames", 0)):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < least:
                raise ValueError(f"{name} must be {'a positive' if least else 'a non-negative'} integer, got {v!r}")
        try:
            make_reaction(self.reaction, self.flow_rate_bps or 1e9, **self.reaction_params)
        except TypeError:
            import inspect

            from traffic.reaction import Dcqcn, HpccWindow, NoReaction

            cls: type[NoReaction] = {"dcqcn": Dcqcn, "hpcc": HpccWindow}.get(self.reaction, NoReaction)
            known = [n for n in inspect.signature(cls).parameters if n not in ("self", "line_rate_bps")]
            raise ValueError(f"reaction {self.reaction} takes the parameters {', '.join(known) or 'none'}; "
                             f"got {', '.join(sorted(self.reaction_params))}") from None
        check_name(self.transport)
        transport_params(**self.transport_params)

        if self.plane_policy not in PLANE_POLICIES:
            raise ValueError(f"unknown plane policy {self.plane_policy!r}; known: {', '.join(PLANE_POLICIES)}")
        if self.spray_unit not in SPRAY_UNITS:
            raise ValueError(f"unknown spray unit {self.spray_unit!r}; known: {', '.join(SPRAY_UNITS)}")
        return self


@dataclass
class FlowRecord:
    """What happened to one transfer."""

    flow: int
    collective: tuple[str, int]
    transfer: int
    src: int
    dst: int
    plane: int
    bytes: int
    npkts: int
    sent: int = 0
    tx_dropped: int = 0  # the local qdisc/driver refused the frame (counted as sent and lost)
    start_ns: int = 0
    send_done_ns: int = 0
    settle_ns: int = 0
    delivered: int = 0
    delivered_bytes: int = 0
    duplicates: int = 0
    reordered: int = 0
    reorder_max: int = 0
    reorder_buffer: int = 0  # the most packets the receiver held above a missing one (selective repeat)
    ce: int = 0
    qdepth_max: int = -1
    complete: bool = False
    rate_cuts: int = 0
    sent_bytes: int = 0  # frame bytes put on the wire, retransmissions included
    retransmitted: int = 0
    spurious: int = 0  # retransmitted copies of packets whose first copy had arrived
    discarded: int = 0  # arrivals the transport threw away (go-back-N: out of order; duplicates)
    trimmed: int = 0  # trimmed (header-only) arrivals
    timeouts: int = 0
    naks: int = 0
    feedback_sent: int = 0  # ACK/NAK/CNP frames the receiver sent
    feedback_received: int = 0  # ... and the sender got back
    failed: bool = False  # the sender gave up (retransmission timeouts in a row)

    @property
    def lost(self) -> int:
        return self.npkts - self.delivered

    @property
    def fct_s(self) -> float | None:
        if not self.complete or not self.settle_ns:
            return None
        return (self.settle_ns - self.start_ns) / 1e9


@dataclass
class CollectiveRecord:
    name: str
    iteration: int
    kind: str
    algorithm: str
    size: int
    ranks: tuple[int, ...]
    start_ns: int = 0
    end_ns: int = 0
    flows: list[int] = field(default_factory=list)
    inc: dict | None = None  # in-network all-reduce: traffic/inc/endpoint.py IncCollective.stats()

    @property
    def time_s(self) -> float | None:
        if not self.end_ns:
            return None
        return (self.end_ns - self.start_ns) / 1e9


@dataclass
class RunResult:
    flows: list[FlowRecord]
    collectives: list[CollectiveRecord]
    duration_s: float
    packets_sent: int
    timed_out: bool
    packet_limit_hit: bool
    rx_socket_drops: int
    foreign_frames: int
    config: HostConfig
