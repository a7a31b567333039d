"""What a switch's tables should hold, as P4Runtime updates: the one place that speaks `p4src/ethplus.p4`'s
table and action names (docs/ethplus-header.md).

Pure builders: they read routes and the policy and fill an `InstalledState` (which group id stands for
which candidate-port set), and write nothing; controller/fabric.py decides when to send what.
Table entries are encoded straight to bytes (`SwitchConnection.entry_update`): at 70k entries a protobuf
object per entry costs seconds; members, groups and the PRE (a few per port) stay protobuf messages.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from p4.v1 import p4runtime_pb2 as pb

from controller.client import SwitchConnection, as_entity
from controller.codec import Value
from controller.fabric_state import InstalledState
from controller.messages import UpdateLike
from controller.policies import Policy
from controller.probes import PROBE_MGRP, probe_flood_ports
from controller.routing import SwitchRoutes
from topologies.model import Topology

ECMP_PROFILE = "ecmp_selector"
INSERT, MODIFY = pb.Update.INSERT, pb.Update.MODIFY


def desired(conn: SwitchConnection, name: str, routes: SwitchRoutes, policy: Policy,
            topo: Topology) -> tuple[InstalledState, list[UpdateLike]]:
    """Every entity the switch should hold for these routes and the policy, as the updates that install it
    on an empty switch (the lb_config default entry is a MODIFY), and the group bookkeeping that goes
    with them."""
    state = InstalledState()
    updates = list(group_updates(conn, state, routes.groups.values()))
    for route in routes.routes:
        gid = state.group_ids[routes.groups[route.group_id]]
        state.route_group[route.eid] = gid
        updates += route_updates(conn, route.eid, route.ipv4, gid, pb.Update.INSERT)
    for port, (src, dst) in routes.neighbor_macs.items():
        updates.append(conn.entry_update(INSERT, "neighbor_mac", {"standard_metadata.egress_port": port},
                                         "set_macs", {"src_mac": src, "dst_mac": dst}))
        ecn = policy.ecn_for_port(name, port)
        if ecn is not None:
            updates.append(conn.entry_update(INSERT, "ecn_config", {"standard_metadata.egress_port": port},
                                             "set_ecn_thresholds", dict[str, Value](ecn.params())))
    params: dict[str, Value] = dict(policy.lb_params())
    flood = probe_flood_ports(topo, name) if policy.uses_probes else []
    if flood:
        params["probe_mgrp"] = PROBE_MGRP
        updates.append(_insert(conn.multicast_group(PROBE_MGRP, flood)))
    updates.append(conn.entry_update(MODIFY, "lb_config", action="set_lb_config", params=params, default=True))
    tuning = policy.tuning_params()
    if tuning is not None:
        updates.append(conn.entry_update(MODIFY, "lb_tuning", action="set_lb_tuning",
                                         params=dict[str, Value](tuning), default=True))
    trim = policy.trim_params()
    if trim is not None:
        updates.append(conn.entry_update(MODIFY, "trim_config", action="set_trim", params=dict[str, Value](trim),
                                         default=True))
    return state, updates


def group_updates(conn: SwitchConnection, state: InstalledState,
                  port_sets: Iterable[tuple[int, ...]]) -> Iterable[UpdateLike]:
    """Members, selector group, ECMP entry and candidate list for every candidate set not yet installed."""
    for ports in port_sets:
        if ports in state.group_ids or not ports:
            continue
        gid = max(state.group_ids.values(), default=0) + 1
        state.group_ids[ports] = gid
        for port in ports:
            if port not in state.members:
                state.members.add(port)
                update = pb.Update(type=pb.Update.INSERT)
                conn.member(ECMP_PROFILE, port, "ecmp_set_port", {"port": port},
                            into=update.entity.action_profile_member)
                yield update
        update = pb.Update(type=pb.Update.INSERT)
        conn.group(ECMP_PROFILE, gid, ports, max_size=8, into=update.entity.action_profile_group)
        yield update
        yield conn.entry_update(INSERT, "ecmp_group", {"meta.group_id": gid}, group_id=gid)
        padded = list(ports) + [0] * (8 - len(ports))
        params: dict[str, Value] = {"n_ports": len(ports), **{f"port{i}": p for i, p in enumerate(padded)}}
        yield conn.entry_update(INSERT, "nhop_group", {"meta.group_id": gid}, "set_candidates", params)


def route_updates(conn: SwitchConnection, eid: int, ipv4: str, gid: int, kind: int) -> list[UpdateLike]:
    params: dict[str, Value] = {"group_id": gid, "dst_index": eid}
    return [conn.entry_update(kind, "eid_table", {"hdr.ethplus.dst_id": eid}, "eid_to_group", params),
            conn.entry_update(kind, "ipv4_lpm", {"hdr.ipv4.dstAddr": f"{ipv4}/32"}, "ipv4_to_group", params)]


def reroute_updates(conn: SwitchConnection, state: InstalledState, new: SwitchRoutes) -> list[UpdateLike]:
    """The updates that move a switch from `state` to the new routes: new groups, then the destinations
    whose candidate set changed (MODIFY); `state` is updated to match."""
    updates = list(group_updates(conn, state, new.groups.values()))
    for route in new.routes:
        gid = state.group_ids.get(new.groups[route.group_id])
        if gid is None or state.route_group.get(route.eid) == gid:
            continue
        state.route_group[route.eid] = gid
        updates += route_updates(conn, route.eid, route.ipv4, gid, pb.Update.MODIFY)
    return updates


def _insert(message: Any) -> pb.Update:
    return pb.Update(type=pb.Update.INSERT, entity=as_entity(message))

