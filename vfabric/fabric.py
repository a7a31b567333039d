"""A topology realised in virtual time: one VirtualSwitch per switch, a Link per cable, NIC ports per host.

Rates and delays are the topology's nominal ones (`Link.rate_gbps`, `Link.delay_us`): nothing is scaled.
"""

from __future__ import annotations

from dataclasses import dataclass

from linklayer.attach import port_flow
from linklayer.config import LinkLayerConfig
from linklayer.flow import FlowStats
from p4exec.switch.tm import QueueConfig
from topologies.bmv2_launch import PRIORITY_QUEUES
from topologies.model import Topology
from vfabric.events import Simulator
from vfabric.hosts import HostConfig, VirtualEndpoints
from vfabric.links import Channel, Link
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
    # the link layer below P4 (linklayer/): flow control (PFC/CBFC) on every port and NIC; None: nothing
    link_layer: LinkLayerConfig | None = None


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
        self.flow_control = ll is not None and ll.flow_control != "none"
        if ll is not None and self.flow_control:
            for sw in self.switches.values():
                sw.use_flow_control(ll)
        self.endpoints = VirtualEndpoints(self.sim, topo, hosts)
        eid_of = {ep.host: ep.eid for ep in topo.endpoints.values()}
        self.links: list[Link] = []
        self.to_hosts: list[Channel] = []  # channels whose far end is a host NIC port
        for index, ln in enumerate(topo.links):
            link = Link(self.sim, f"{ln.a}<->{ln.b}", ln.rate_gbps * 1e9, int(round(ln.delay_us * 1000)), index)
            self.links.append(link)
            for near, far in ((ln.a, ln.b), (ln.b, ln.a)):
                channel = Channel(link, *self._receiver(far.owner, far.number, eid_of, link, ln.plane))
                if far.owner not in self.switches:
                    self.to_hosts.append(channel)
                elif cfg.shared_arrivals:
                    channel.early = self.switches[far.owner].defer_arrival
                if near.owner in self.switches:
                    self.switches[near.owner].attach(near.number, channel)
                else:
                    nic = self.endpoints.attach(eid_of[near.owner], ln.plane, channel)
                    if ll is not None and self.flow_control:
                        iface = topo.endpoints[near.owner].interfaces.get(ln.plane)
                        mac = bytes.fromhex(iface.mac.replace(":", "")) if iface is not None else bytes(6)
                        pf = port_flow(ll, nic, self.sim, link.rate_bps, mac, host=True)
                        if pf is not None:
                            nic.enable_flow(pf)

    def _receiver(self, node: str, port: int, eid_of: dict[str, int], link: Link, plane: int):
        """(deliver(port, frame), port, extra delay) for frames arriving at node:port over `link`."""
        sw = self.switches.get(node)
        if sw is not None:
            return sw.receive, port, sw.pipeline_latency_ns
        # the NIC's receive path is called straight from the heap with (link, endpoint, plane): no wrapper
        receive = self.endpoints.receive_flow if self.flow_control else self.endpoints.receive
        return receive, (link, eid_of[node], plane), 0

    def deliver_early(self, on: bool) -> None:
        """Frames towards hosts accounted in batches ahead of their arrival (`VirtualEndpoints.defer_arrival`)
        instead of by an arrival event each: only where nothing can change between the two (the caller
        checks)."""
        on = on and not self.flow_control  # a frame's arrival returns credits at its instant
        for ch in self.to_hosts:
            ch.early = self.endpoints.defer_arrival if on else None

    def set_link(self, a: str, b: str, up: bool, index: int | None = None) -> int:
        """Carrier change at both ends of the link a-b at once (the data plane sees it now; the controller
        later), as the emulated `Fabric.set_link`; returns the link's index in topo.links."""
        if index is None:
            index = self.topo.link_index(a, b)
        ln = self.topo.links[index]
        self.links[index].up = up
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
        """Flow-control counters per (node, port): switch ports by number, host NIC ports by plane."""
        out: dict[tuple[str, int], FlowStats] = {}
        for name, sw in sorted(self.switches.items()):
            for port, st in sw.flow_stats().items():
                out[(name, port)] = st
        host_of = {ep.eid: ep.host for ep in self.topo.endpoints.values()}
        for (eid, plane), nic in sorted(self.endpoints.nics.items()):
            if nic.flow is not None:
                nic.flow.close()
                out[(host_of[eid], plane)] = nic.flow.stats
        return out

    def flow_totals(self) -> dict[str, int]:
        """The run's flow-control totals (linklayer.flow.TOTALS and the rest of FlowStats)."""
        total = FlowStats()
        for st in self.flow_stats().values():
            total.add(st)
        return total.as_dict()
