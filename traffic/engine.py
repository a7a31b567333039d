"""The replay engine: one process sends the transfers of many endpoints and receives them, with pacing,
dependencies and hard bounds on packets and time — the host/NIC model of traffic/host.py on the real-time
scheduler (traffic/realtime.py), each NIC port an AF_PACKET socket in its endpoint's namespace.

Each endpoint plane is a `NicAddress` (namespace + interface + MAC/IP). The engine opens one socket per port the
plan uses, hands every frame read from it to the model's receive path and lets the model's NIC ports send
through it. Nothing runs unbounded: `time_limit_ns` and `max_packets` stop the run, and a flow whose last
packet was sent is settled after `loss_grace_ns` even if packets are missing.
"""

from __future__ import annotations

import errno
import select
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from linklayer import LinkLayerConfig, LinkPort
from traffic.host import UNKNOWN_RATE_BPS, Endpoints, TxRefused
from traffic.netns import open_packet_socket, socket_drops
from traffic.realtime import RealTimeScheduler
from traffic.records import CollectiveRecord, FlowRecord, HostConfig, NicAddress, PlannedCollective, RunResult

__all__ = ["CollectiveRecord", "Engine", "HostConfig", "FlowRecord", "PlannedCollective", "NicAddress", "RunResult"]

_GONE = (errno.ENOBUFS, errno.ENETDOWN, errno.ENXIO)  # the port's queue or link went away under a fault
RECV_BUDGET = 1024  # frames read from one socket per turn: receiving is dearer than sending and must keep up


class Carrier:
    """A real port's wire as the model's receive path sees it: a frame that was read arrived (it was not lost
    on a link that went down; the kernel already dropped those)."""

    up = True
    lost = 0


class SocketIO:
    """One NIC port's frame I/O: an AF_PACKET socket, at most `rate_bps` (None: as fast as the host sends)."""

    __slots__ = ("sock", "_send", "rate_bps", "ns_per_byte")

    def __init__(self, sock: socket.socket, rate_bps: float | None) -> None:
        self.sock = sock
        self._send = sock.send
        self.rate_bps = rate_bps or 0.0
        self.ns_per_byte = 8e9 / rate_bps if rate_bps else 0.0

    def send(self, frame: bytes, start_ns: float) -> float:
        """Hand the frame to the kernel; a full socket queue gets a millisecond to drain before the frame is
        refused (`TxRefused`: counted sent and lost)."""
        try:
            self._send(frame)
        except BlockingIOError:
            if not select.select((), (self.sock,), (), 0.001)[1]:
                raise TxRefused from None
            try:
                self._send(frame)
            except OSError:
                raise TxRefused from None
        except OSError as e:
            if e.errno not in _GONE:
                raise
            raise TxRefused from None
        return start_ns + len(frame) * self.ns_per_byte


@dataclass
class NicLinkLayer:
    """The link layer on the engine's NIC ports (linklayer/port.py): each socket's frames go out through a
    LinkPort and every frame read passes it first. `names[(eid, plane)]` is the port's "host:port" (its link
    errors are keyed by it, as vfabric keys them); `ports` fills in as the engine opens them."""

    config: LinkLayerConfig
    names: dict[tuple[int, int], str] = field(default_factory=dict)
    seed: int = 0
    ports: dict[tuple[int, int], LinkPort] = field(default_factory=dict)
    # (eid, plane) -> the emulated link's rate, which PFC times its pause quanta by at both ends (empty: unknown)
    rates: dict[tuple[int, int], float] = field(default_factory=dict)


class Engine:
    """Replays planned collectives on the given ports. Use as a context manager so sockets get closed."""

    def __init__(self, ports: dict[tuple[int, int], NicAddress], config: HostConfig,
                 link: NicLinkLayer | None = None) -> None:
        self.ports = dict(ports)
        self.link = link if link is not None and link.config.active else None
        self.config = config.validate()
        if self.config.flow_rate_bps is None:
            raise ValueError("a real-time run paces every flow: give it a rate (rate_mbps)")
        self._socks: dict[tuple[str | None, str], socket.socket] = {}
        self._owner: dict[tuple[str | None, str], tuple[int, int]] = {}

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for s in self._socks.values():
            s.close()
        self._socks.clear()
        self._owner.clear()

    def _open(self, key: tuple[int, int], sched: RealTimeScheduler,
              receive: Callable[[tuple[Carrier, int, int], bytes], None]) -> SocketIO:
        """The socket of port `key`, read by the scheduler into the model's receive path."""
        port = self.ports[key]
        where = (port.netns, port.ifname)
        if where in self._owner:
            raise ValueError(f"endpoints {self._owner[where][0]} and {key[0]} share interface {port.ifname} "
                             f"in namespace {port.netns}: one NIC port each, please")
        sock = self._socks.get(where)
        if sock is None:
            sock = self._socks[where] = open_packet_socket(port.netns, port.ifname)
        socket_drops(sock)  # reset the kernel's counter
        self._owner[where] = key
        at = (Carrier(), key[0], key[1])
        recv = sock.recv
        io = SocketIO(sock, self.config.port_rate_bps)
        lp: LinkPort | None = None
        deliver: Callable[[tuple[Carrier, int, int], bytes], None] = receive
        if self.link is not None:
            name = self.link.names.get(key, f"ep{key[0]}:{key[1]}")
            lp = self.link.ports[key] = LinkPort(self.link.config, sched, io, name, self.link.seed,
                                                 mac=bytes.fromhex(port.mac.replace(":", "")))
            link_in = lp.receive

            def through_link(at: tuple[Carrier, int, int], data: bytes) -> None:
                """The port's link layer first (FCS, LLR, flow control), then the model."""
                got = link_in(data)
                if got is not None:
                    receive(at, got)

            deliver = through_link

        def readable(_fd: int) -> None:
            for _ in range(RECV_BUDGET):
                try:
                    data = recv(4096)
                except BlockingIOError:
                    return
                except OSError as e:  # the port's link went down under a fault: nothing to read now
                    if e.errno not in (errno.ENETDOWN, errno.ENXIO):
                        raise
                    return
                deliver(at, data)

        sched.watch(sock.fileno(), readable)
        return io if lp is None else lp  # type: ignore[return-value]

    def run(self, plan: list[PlannedCollective]) -> RunResult:
        cfg = self.config
        with RealTimeScheduler(batch=cfg.send_batch) as sched:
            hosts = Endpoints(sched, self.ports, cfg, count_strays=False, copy_frames=False,
                              open_io=lambda key: self._open(key, sched, hosts.receive))
            self._owner.clear()
            hosts.load(plan, None)
            link = self.link
            if link is not None and link.config.flow_control != "none":  # PFC/CBFC on the NIC ports
                for key, nic in sorted(hosts.nics.items()):
                    lp = link.ports.get(key)
                    if lp is not None:
                        hosts.attach_flow(nic, lp, link.config, bytes.fromhex(self.ports[key].mac.replace(":", "")),
                                          link.rates.get(key, UNKNOWN_RATE_BPS))
            hosts.build_templates()
            t0 = sched.now = time.monotonic_ns()
            hosts.begin(t0)
            timed_out = sched.run(lambda: hosts.unsettled > 0, t0 + cfg.time_limit_ns)
            end = time.monotonic_ns()
            if link is not None:  # the switches run on: their last frames must not wait for our ACK timers
                for lp in link.ports.values():
                    lp.ack_now()
            sched.now = end
            hosts.close_flows()
            drops = sum(socket_drops(s) for s in self._socks.values())
            return hosts.result(end - t0, timed_out, cfg, end_ns=end, rx_socket_drops=drops)
