"""A topology realised in virtual time: one VirtualSwitch per switch, a Link per cable, NIC ports per host.

Rates and delays are the topology's nominal ones (`Link.rate_gbps`, `Link.delay_us`): nothing is scaled.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import count
from typing import Any

from linklayer import LinkLayerConfig, LinkPort
from linklayer.flow import FlowStats
from p4exec.switch.tm import QueueConfig
from topologies.bmv2_launch import PRIORITY_QUEUES
from topologies.model import Topology
from vfabric.events import Simulator
from vfabric.hosts import HostConfig, VirtualEndpoints
from vfabric.links import SOURCE_SHIFT, Channel, Link
from vfabric.switch import DEFAULT_PIPELINE_LATENCY_NS, VirtualSwitch


@dataclass
class FabricConfig:
    queue_depth: int = 64  # packets per egress queue (BMv2's default)
    priority_queues: int = PRIORITY_QUEUES  # strict-priority queues per port, as the emulated fabric switches
    pipeline_latency_ns: int = DEFAULT_PIPELINE_LATENCY_NS
    seed: int = 0
    # frames reaching a switch in the same nanosecond share one event (VirtualSwitch.defer_arrival); the
    # records are the same either way, fewer events run
    shared_arrivals: bool = True
    # the link layer (linklayer/): FCS errors, LLR, flow control; inactive (the default) builds nothing
    link_layer: LinkLayerConfig = field(default_factory=LinkLayerConfig)


def channel_sources(topo: Topology, eid_of: dict[str, int]) -> dict[Any, int]:
    """The source id (>= 1) of each link direction (link index, reverse), from the topology alone: numbered by
    receiving node (switches in topology order, then NIC ports by endpoint and plane), then port; and, just
    before the NIC ports', the hosts' arrival batches (`HOST_BATCHES`, VirtualEndpoints.defer_arrival). So the
    arrivals of one instant at one node are consecutive in the event order — a node's batch of them
    (`VirtualSwitch.defer_arrival`) is not interleaved with other nodes' — and every partitioning numbers them
    alike."""
    order = {node.name: i for i, node in enumerate(topo.switches)}
    keys: list[tuple[tuple[int, ...], Any, bool]] = [((1, -1, 0, 0), HOST_BATCHES, False)]
    for index, ln in enumerate(topo.links):
        for reverse, far in ((False, ln.b), (True, ln.a)):
            owner = far.owner
            key = (0, order[owner], far.number, 0) if owner in order else (1, eid_of[owner], ln.plane, far.number)
            keys.append((key, index, reverse))
    keys.sort()
    return {(index, reverse) if index != HOST_BATCHES else HOST_BATCHES: k + 1
            for k, (_key, index, reverse) in enumerate(keys)}


HOST_BATCHES = "host batches"  # the source of VirtualEndpoints' batch events in `channel_sources`


class VirtualFabric:
    """Everything of one topology on one simulator."""

    def __init__(self, topo: Topology, fabric: FabricConfig | None = None, hosts: HostConfig | None = None,
                 sim: Simulator | None = None) -> None:
        self.topo = topo
        self.config = fabric or FabricConfig()
        self.sim = sim or Simulator()
        cfg = self.config
        self.switches: dict[str, VirtualSwitch] = {}
        for node in topo.switches:
            self.switches[node.name] = VirtualSwitch(
                self.sim, node.name, node.device_id or 0, QueueConfig(depth=cfg.queue_depth), cfg.priority_queues,
                cfg.pipeline_latency_ns, seed=cfg.seed * 1000 + (node.device_id or 0))
        ll = cfg.link_layer
        self.flow_control = ll.flow_control != "none"  # PFC or CBFC on every port (linklayer/attach.py)
        if self.flow_control:
            for sw in self.switches.values():
                sw.use_flow_control(ll)
        self.endpoints = VirtualEndpoints(self.sim, topo, hosts)
        eid_of = {ep.host: ep.eid for ep in topo.endpoints.values()}
        self.links: list[Link] = []
        self.to_hosts: list[Channel] = []  # channels whose far end is a host NIC port
        sources = channel_sources(topo, eid_of)
        self.endpoints.batch_place = count(sources[HOST_BATCHES] << SOURCE_SHIFT).__next__
        # link-layer ports (node, port number, LinkPort), in topology order; empty when the link layer is off
        self.link_ports: list[tuple[str, int, LinkPort]] = []
        for index, ln in enumerate(topo.links):
            link = Link(self.sim, f"{ln.a}<->{ln.b}", ln.rate_gbps * 1e9, int(round(ln.delay_us * 1000)), index)
            self.links.append(link)
            outs: list[Any] = []
            for reverse, (_near, far) in enumerate(((ln.a, ln.b), (ln.b, ln.a))):
                deliver, port, extra_ns = self._receiver(far.owner, far.number, eid_of, link, ln.plane)
                channel = Channel(link, deliver, port, extra_ns, source=sources[index, bool(reverse)])
                if far.owner not in self.switches:
                    self.to_hosts.append(channel)
                elif cfg.shared_arrivals and not ll.active:
                    channel.early = self.switches[far.owner].defer_arrival
                outs.append(channel)
            if ll.active:  # each end's port transmits on its direction and takes the other's frames
                outs = [self._link_port(end, ch, back) for end, ch, back in
                        ((ln.a, outs[0], outs[1]), (ln.b, outs[1], outs[0]))]
            for near, out in ((ln.a, outs[0]), (ln.b, outs[1])):
                if near.owner in self.switches:
                    sw = self.switches[near.owner]
                    sw.attach(near.number, out)
                    if ll.active:
                        sw.attach_link(near.number, out)
                    if self.flow_control:
                        sw.attach_flow(near.number, out, link.rate_bps, sw.port_mac(near.number))
                else:
                    nic = self.endpoints.attach(eid_of[near.owner], ln.plane, out)
                    if self.flow_control:
                        self.endpoints.attach_flow(nic, out, ll, _port_mac(out.name))

    def _link_port(self, end: Any, out: Channel, back: Channel) -> LinkPort:
        """The link-layer port at `end`: it sends on `out` and receives what arrives over `back`."""
        name = f"{end.owner}:{end.number}"
        link = out.link
        # out and back: two propagation delays, a switch pipeline at either end, a full frame each way
        loop = 2 * link.delay_ns + 2 * self.config.pipeline_latency_ns + int(2 * link.serialisation_ns(9216))
        lp = LinkPort(self.config.link_layer, self.sim, out, name, self.config.seed, mac=_port_mac(name),
                      loop_ns=loop)
        back.deliver = _through(lp, back.deliver, back.link)
        self.link_ports.append((end.owner, end.number, lp))
        return lp

    def _receiver(self, node: str, port: int, eid_of: dict[str, int], link: Link, plane: int):
        """(deliver(port, frame), port, extra delay) for frames arriving at node:port over `link`."""
        sw = self.switches.get(node)
        if sw is not None:
            return sw.receive, port, sw.pipeline_latency_ns
        # the NIC's receive path is called straight from the heap with (link, endpoint, plane): no wrapper
        return self.endpoints.receive, (link, eid_of[node], plane), 0

    def deliver_early(self, on: bool) -> None:
        """Frames towards hosts accounted in batches ahead of their arrival (`VirtualEndpoints.defer_arrival`)
        instead of by an arrival event each: only where nothing can change between the two (the caller
        checks)."""
        on = on and not self.config.link_layer.active  # every frame must pass its port's link layer
        for ch in self.to_hosts:
            ch.early = self.endpoints.defer_arrival if on else None

    def set_link(self, a: str, b: str, up: bool, index: int | None = None) -> int:
        """Carrier change at both ends of the link a-b at once (the data plane sees it now; the controller
        later), as the emulated `Fabric.set_link`; returns the link's index in topo.links."""
        if index is None:
            index = self.topo.link_index(a, b)
        ln = self.topo.links[index]
        self.links[index].up = up
        if not up:
            for owner, number, lp in self.link_ports:
                if (owner, number) in ((ln.a.owner, ln.a.number), (ln.b.owner, ln.b.number)):
                    lp.link_down()
        for end in (ln.a, ln.b):
            sw = self.switches.get(end.owner)
            if sw is not None:
                sw.set_port_up(end.number, up)
        return index

    def set_link_rate(self, index: int, rate_bps: float) -> None:
        """A slow link: both directions serialise at `rate_bps` from now on."""
        from vfabric.events import SimError

        if rate_bps <= 0:
            raise SimError(f"link {self.links[index].name}: rate must be > 0 bit/s (got {rate_bps!r})")
        link = self.links[index]
        link.rate_bps = float(rate_bps)
        link.ns_per_byte = 8e9 / link.rate_bps
        ln = self.topo.links[index]
        for end in (ln.a, ln.b):
            sw = self.switches.get(end.owner)
            if sw is not None:
                sw.tm.configure(end.number, rate_bps=rate_bps)

    def executions(self) -> int:
        return sum(sw.executions for sw in self.switches.values())

    def flow_stats(self) -> dict[tuple[str, int], FlowStats]:
        """Flow-control counters per (node, port): switch ports by number, host NIC ports by plane (open pauses
        and credit stalls counted up to now)."""
        out: dict[tuple[str, int], FlowStats] = {}
        for name, sw in sorted(self.switches.items()):
            for port, st in sw.flow_stats().items():
                out[(name, port)] = st
        host_of = {ep.eid: ep.host for ep in self.topo.endpoints.values()}
        self.endpoints.close_flows()
        for (eid, plane), nic in sorted(self.endpoints.nics.items()):
            if nic.flow is not None:
                out[(host_of[eid], plane)] = nic.flow.stats
        return out

    def flow_totals(self) -> dict[str, int]:
        """The run's flow-control totals: every FlowStats counter summed (the largest buffer for its maximum)."""
        total = FlowStats()
        for st in self.flow_stats().values():
            total.add(st)
        return total.as_dict()


def _port_mac(name: str) -> bytes:
    """A locally administered source MAC for a port's link control frames."""
    import hashlib

    return b"\x02" + hashlib.blake2b(name.encode(), digest_size=5).digest()


def _through(lp: LinkPort, deliver: Callable[[Any, Any], None], link: Link) -> Callable[[Any, Any], None]:
    """A channel's delivery with the receiving port's link layer first (a frame that met a down link is left
    for the receiver to count as lost)."""

    def rx(port: Any, frame: Any) -> None:
        if link.up:
            frame = lp.receive(frame)
            if frame is None:
                return
        deliver(port, frame)

    return rx
