"""Target-independent fabric model: switches, hosts (GPU/NIC endpoints), numbered ports, links, planes.

The model is the one description every other part reads: the Mininet builder turns it into namespaces and
veths, the controller computes routes from it, the traffic engine takes endpoint ids, MACs and IPs from it.
Everything is derived deterministically from the order of `add_*` calls, so the same parameters always give
the same names, port numbers, ids and addresses.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import networkx as nx

# v1model ports are 9 bits: 511 is BMv2's drop port and 255 the conventional CPU port, so switch front
# ports are 1..254 (port 0 is left unused so that "0" never means a real port by accident).
MAX_SWITCH_PORT = 254
CPU_PORT = 255
MAX_ENDPOINT_ID = 0xFFFF  # the ETH+ scale-up header carries 16-bit endpoint ids; 0 is reserved
# more switches than any fabric ethlab can run on one machine (UPN 512 has 48): a typo such as `--n 100000`
# is an error at once instead of minutes spent building a topology nothing could bring up
MAX_SWITCHES = 4096


class TopologyError(ValueError):
    """A topology that cannot be built: the message names the node/port/link at fault."""


class NodeKind(StrEnum):
    SWITCH = "switch"
    HOST = "host"


@dataclass(frozen=True, order=True)
class Port:
    """One end of a link: a node name and its port number on that node."""

    owner: str
    number: int

    def __str__(self) -> str:
        return f"{self.owner}:{self.number}"


@dataclass
class Node:
    """A switch or a host. `tier` is 0 for hosts and 1.. for switch tiers (1 = leaf/ToR/plane switch)."""

    name: str
    kind: NodeKind
    tier: int
    plane: int | None = None  # a switch's plane; hosts span planes (see Endpoint.interfaces)
    radix: int | None = None  # maximum number of ports (switches)
    role: str = ""  # "leaf", "spine", "tor", "agg", "plane", "host"
    device_id: int | None = None  # P4Runtime device id (switches), 1.. in creation order
    attrs: dict[str, Any] = field(default_factory=dict)

    @property
    def is_switch(self) -> bool:
        return self.kind is NodeKind.SWITCH


@dataclass(frozen=True)
class Link:
    """A point-to-point link; `rate_gbps` is the nominal line rate, `delay_us` the one-way propagation delay."""

    a: Port
    b: Port
    rate_gbps: float
    delay_us: float = 0.0
    plane: int = 0

    def ends(self) -> tuple[Port, Port]:
        return (self.a, self.b)

    def other(self, node: str) -> Port:
        if self.a.owner == node:
            return self.b
        if self.b.owner == node:
            return self.a
        raise KeyError(node)

    def __str__(self) -> str:
        return f"{self.a}<->{self.b}"


@dataclass(frozen=True)
class Interface:
    """A host's attachment to one plane: host port number (= plane), MAC, IPv4 address and prefix length."""

    plane: int
    port: int
    mac: str
    ipv4: str
    prefix_len: int

    @property
    def cidr(self) -> str:
        return f"{self.ipv4}/{self.prefix_len}"

    @property
    def ifname(self) -> str:
        """Interface name inside the host's namespace."""
        return f"eth{self.port}"


@dataclass
class Endpoint:
    """A traffic endpoint (one GPU/NIC): its host node, its 16-bit endpoint id and one interface per plane."""

    host: str
    eid: int
    interfaces: dict[int, Interface] = field(default_factory=dict)  # plane -> interface


def host_mac(eid: int, plane: int) -> str:
    """Locally administered unicast MAC 02:e1:00:PP:EE:EE (plane, endpoint id)."""
    return f"02:e1:00:{plane:02x}:{eid >> 8:02x}:{eid & 0xFF:02x}"


def switch_mac(device_id: int, port: int) -> str:
    """MAC of a switch port, 02:e5:DD:DD:PP:PP, for programs that rewrite the source MAC."""
    return f"02:e5:{device_id >> 8:02x}:{device_id & 0xFF:02x}:{port >> 8:02x}:{port & 0xFF:02x}"


def host_ipv4(eid: int, plane: int) -> str:
    """10.<plane>.<eid hi>.<eid lo>: one /16 per plane, so every endpoint id maps to an address."""
    return f"10.{plane}.{eid >> 8}.{eid & 0xFF}"


PLANE_PREFIX_LEN = 16


@dataclass
class Topology:
    """A fabric: nodes, links and endpoints, built with add_switch/add_host/add_link in a fixed order."""

    name: str
    params: dict[str, Any] = field(default_factory=dict)
    description: str = ""
    nodes: dict[str, Node] = field(default_factory=dict)
    links: list[Link] = field(default_factory=list)
    endpoints: dict[str, Endpoint] = field(default_factory=dict)  # host name -> endpoint
    _ports: dict[str, dict[int, int]] = field(default_factory=dict, repr=False)  # node -> port -> link idx
    _switch_count: int = field(default=0, repr=False)  # the next switch's device id - 1

    # ---- construction -------------------------------------------------------------------------------
    def add_switch(self, name: str, *, tier: int = 1, plane: int = 0, radix: int = MAX_SWITCH_PORT,
                   role: str = "", **attrs: Any) -> Node:
        if not 1 <= radix <= MAX_SWITCH_PORT:
            raise TopologyError(f"switch {name}: radix {radix} outside 1..{MAX_SWITCH_PORT} "
                                f"(v1model ports are 9 bits; {CPU_PORT} is the CPU port)")
        if self._switch_count >= MAX_SWITCHES:
            raise TopologyError(f"switch {name}: more than {MAX_SWITCHES} switches")
        node = Node(name, NodeKind.SWITCH, tier, plane, radix, role, self._switch_count + 1, dict(attrs))
        self._add_node(node)
        self._switch_count += 1
        return node

    def add_host(self, name: str, *, eid: int | None = None, role: str = "host", **attrs: Any) -> Node:
        if eid is None:
            eid = 1 + len(self.endpoints)
        if not 1 <= eid <= MAX_ENDPOINT_ID:
            raise TopologyError(f"host {name}: endpoint id {eid} outside 1..{MAX_ENDPOINT_ID}")
        node = Node(name, NodeKind.HOST, 0, None, None, role, None, dict(attrs))
        self._add_node(node)
        self.endpoints[name] = Endpoint(name, eid)
        return node

    def _add_node(self, node: Node) -> None:
        if not node.name or any(c.isspace() for c in node.name):
            raise TopologyError(f"bad node name {node.name!r}")
        if node.name in self.nodes:
            raise TopologyError(f"duplicate node name {node.name!r}")
        self.nodes[node.name] = node
        self._ports[node.name] = {}

    def add_link(self, a: str, b: str, *, rate_gbps: float = 100.0, delay_us: float = 0.0,
                 a_port: int | None = None, b_port: int | None = None) -> Link:
        """Connect a and b. Switch ports default to the lowest free number; a host's port is its plane."""
        for n in (a, b):
            if n not in self.nodes:
                raise TopologyError(f"link {a}<->{b}: dangling end, no node {n!r}")
        if a == b:
            raise TopologyError(f"link {a}<->{b}: a node cannot link to itself")
        na, nb = self.nodes[a], self.nodes[b]
        if not (na.is_switch or nb.is_switch):
            raise TopologyError(f"link {a}<->{b}: host-to-host links are not supported")
        if na.is_switch and nb.is_switch and na.plane != nb.plane:
            raise TopologyError(f"link {a}<->{b}: joins plane {na.plane} to plane {nb.plane}")
        plane = na.plane if na.is_switch else nb.plane
        assert plane is not None
        pa = self._port_for(na, a_port, plane)
        pb = self._port_for(nb, b_port, plane)
        if rate_gbps <= 0 or delay_us < 0:
            raise TopologyError(f"link {a}<->{b}: rate must be > 0 and delay >= 0")
        link = Link(Port(a, pa), Port(b, pb), float(rate_gbps), float(delay_us), plane)
        idx = len(self.links)
        self.links.append(link)
        self._ports[a][pa] = idx
        self._ports[b][pb] = idx
        for node, port in ((na, pa), (nb, pb)):
            if not node.is_switch:
                self._attach(node.name, plane, port)
        return link

    def _port_for(self, node: Node, port: int | None, plane: int) -> int:
        used = self._ports[node.name]
        if node.is_switch:
            if port is None:
                port = next((p for p in range(1, MAX_SWITCH_PORT + 1) if p not in used), None)
                if port is None or port > (node.radix or MAX_SWITCH_PORT):
                    raise TopologyError(f"switch {node.name}: radix {node.radix} exceeded")
            if not 1 <= port <= (node.radix or MAX_SWITCH_PORT):
                raise TopologyError(f"switch {node.name}: port {port} outside 1..{node.radix} "
                                    f"(radix exceeded)")
        else:
            if plane in self.endpoints[node.name].interfaces:
                raise TopologyError(f"host {node.name}: second link in plane {plane} "
                                    f"(a host has one interface per plane)")
            port = plane if port is None else port
            if port < 0:
                raise TopologyError(f"host {node.name}: negative port {port}")
        if port in used:
            raise TopologyError(f"{node.kind} {node.name}: port {port} reused "
                                f"(already on {self.links[used[port]]})")
        return port

    def _attach(self, host: str, plane: int, port: int) -> None:
        ep = self.endpoints[host]
        ep.interfaces[plane] = Interface(plane, port, host_mac(ep.eid, plane), host_ipv4(ep.eid, plane),
                                         PLANE_PREFIX_LEN)

    # ---- queries ------------------------------------------------------------------------------------
    @property
    def switches(self) -> list[Node]:
        return [n for n in self.nodes.values() if n.is_switch]

    @property
    def hosts(self) -> list[Node]:
        return [n for n in self.nodes.values() if not n.is_switch]

    @property
    def planes(self) -> list[int]:
        return sorted({n.plane for n in self.switches if n.plane is not None})

    def ports(self, node: str) -> dict[int, Link]:
        """Port number -> link, in port order."""
        return {p: self.links[i] for p, i in sorted(self._ports[node].items())}

    def link_index(self, a: str, b: str) -> int:
        """Index in `links` of the (first) cable between nodes a and b, either way round; KeyError if none.
        The one lookup the controller, the emulated fabric and vfabric share."""
        for index, ln in enumerate(self.links):
            if {ln.a.owner, ln.b.owner} == {a, b}:
                return index
        raise KeyError(f"no link between {a} and {b}")

    def links_of(self, node: str) -> Iterator[Link]:
        return iter(self.ports(node).values())

    def neighbor(self, node: str, port: int) -> Port:
        """What is at the far end of node:port."""
        return self.links[self._ports[node][port]].other(node)

    def endpoint_by_id(self, eid: int) -> Endpoint:
        for ep in self.endpoints.values():
            if ep.eid == eid:
                return ep
        raise KeyError(eid)

    def graph(self) -> nx.MultiGraph:
        """networkx view: nodes carry kind/tier/plane/role, one edge per link keyed by link index."""
        g = nx.MultiGraph(name=self.name)
        for n in self.nodes.values():
            g.add_node(n.name, kind=str(n.kind), tier=n.tier, plane=n.plane, role=n.role,
                       device_id=n.device_id)
        for i, link in enumerate(self.links):
            g.add_edge(link.a.owner, link.b.owner, key=i, ports={link.a.owner: link.a.number,
                       link.b.owner: link.b.number}, rate_gbps=link.rate_gbps, delay_us=link.delay_us,
                       plane=link.plane)
        return g

    def plane_graph(self, plane: int) -> nx.MultiGraph:
        """The plane's switches, the hosts attached to it and the links of that plane."""
        g = self.graph()
        keep = [(u, v, k) for u, v, k, d in g.edges(keys=True, data=True) if d["plane"] == plane]
        sub = nx.MultiGraph(g.edge_subgraph(keep))
        for n in self.switches:
            if n.plane == plane and n.name not in sub:
                sub.add_node(n.name, **g.nodes[n.name])
        return sub

    def summary(self) -> dict[str, Any]:
        return {
            "name": self.name, "switches": len(self.switches), "hosts": len(self.hosts),
            "links": len(self.links), "planes": len(self.planes),
        }


def parse_ipv4(addr: str) -> ipaddress.IPv4Address:
    return ipaddress.IPv4Address(addr)
