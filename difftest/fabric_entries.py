"""The entries a `p4src/` program gets in a small fabric, computed by the fabric controller's own code.

One leaf of a 2-leaf, 2-spine, 2-hosts-per-leaf leaf/spine: `controller.routing.compute_routes` gives its
routes, `controller.tables.desired` the updates for `ethplus.p4` exactly as `ethlab up` installs them.
`basic_l3.p4` has no fabric application; it gets the same routes as /32 LPM entries to the first candidate
port, with the neighbour MAC the controller computes for that port.
"""

from __future__ import annotations

from dataclasses import dataclass

from p4.v1 import p4runtime_pb2 as pb

from controller.client import SwitchConnection
from controller.policies import make_policy
from controller.routing import SwitchRoutes, compute_routes
from controller.tables import desired
from topologies.catalog import build
from topologies.model import Topology

SWITCH = "leaf1"


@dataclass(frozen=True)
class FabricView:
    """What the differential knows of the switch under test: its ports and the fabric's addresses."""

    topo: Topology
    switch: str
    routes: SwitchRoutes

    @property
    def ports(self) -> list[int]:
        return sorted(self.topo.ports(self.switch))


def small_fabric() -> FabricView:
    topo = build("leafspine", leaves=2, spines=2, hosts_per_leaf=2)
    return FabricView(topo, SWITCH, compute_routes(topo)[SWITCH])


def ethplus_updates(conn: SwitchConnection, view: FabricView, policy: str = "ecmp") -> list[pb.Update]:
    _, updates = desired(conn, view.switch, view.routes, make_policy(policy), view.topo)
    return updates


def basic_l3_updates(conn: SwitchConnection, view: FabricView) -> list[pb.Update]:
    updates = []
    for route in view.routes.routes:
        port = view.routes.groups[route.group_id][0]
        entry = conn.table_entry("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": (route.ipv4, 32)}, "ipv4_forward",
                                 {"dstAddr": view.routes.neighbor_macs[port][1], "port": port})
        updates.append(pb.Update(type=pb.Update.INSERT, entity=pb.Entity(table_entry=entry)))
    return updates


def updates_for(program: str, conn: SwitchConnection, view: FabricView, policy: str = "ecmp") -> list[pb.Update]:
    """`policy` (ethplus.p4 only): ecmp and spray decide without the clock; flowlet and adaptive follow it,
    so only ecmp and spray can be compared packet for packet."""
    if program == "ethplus":
        return ethplus_updates(conn, view, policy)
    if program == "basic_l3":
        return basic_l3_updates(conn, view)
    raise ValueError(f"no fabric entries for program {program!r}")
