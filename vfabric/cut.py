"""Coupled partitions: which MPI rank simulates which switches (and the NIC ports attached to them), and the
lookahead of the cut.

A fabric is cut only across switch↔switch links: a host's NIC port always lives with the switch it is cabled
to (its transmit-ahead window and early delivery read both ends of that link). A frame crossing a cut link
cannot reach the far rank before propagation delay + the serialisation of a minimum frame + the far switch's
pipeline latency after it was sent: the smallest of these over the cut links is the lookahead, the length of
the conservative windows of vfabric/window.py.

Some couplings between hosts do not travel over the wire, and have no lookahead; the partitioner keeps both
ends on one rank (a union constraint, as vfabric/partition.py joins pieces) or refuses coupled mode:

- transport `none`: congestion feedback and loss grace read the receiver's state in-process → a flow's source
  and destination NIC ports on one rank;
- a flow that starts when another settles: a reliable flow settles where its last packet is delivered (its
  destination) → that NIC port and the dependent flow's source on one rank (a flow that *fails* settles at
  its source: should its dependent start on another rank, the run stops with an error naming both);
- a collective that comes `after` another: all NIC ports of both on one rank;
- refused with a reason (the run stays in one process): the link layer, in-network all-reduce, adaptive
  probes and P4Runtime samples (the controller reads every switch's data-plane state while the run goes on),
  NIC plane spraying (the plane choice reads shared path health), direct counters/meters.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vfabric.events import SimError
from vfabric.links import WIRE_OVERHEAD
from vfabric.partition import _Union

MIN_FRAME = 60  # bytes of the shortest frame a channel sends (shorter ones are padded: links.wire_bytes)
NO_CUT_NS = 1 << 40  # the lookahead when no link is cut (windows then end only at global instants)


class CutError(SimError):
    """A coupled partition that cannot be simulated exactly (the message names the link, host or flow)."""


@dataclass
class Cut:
    """Rank of every switch and NIC port; the cut links and the lookahead; or why there is no coupled split."""

    ranks: int = 1
    switch_rank: dict[str, int] = field(default_factory=dict)
    nic_rank: dict[tuple[int, int], int] = field(default_factory=dict)  # (endpoint id, plane) -> rank
    cut_links: list[int] = field(default_factory=list)  # link indexes whose ends are on two ranks
    lookahead_ns: int = NO_CUT_NS
    reason: str = ""  # why the run is not split (empty when it is)

    def describe(self, topo: Any) -> str:
        sizes = [sum(1 for r in self.switch_rank.values() if r == k) for k in range(self.ranks)]
        ahead = ("no cut link, windows end at global instants only" if not self.cut_links
                 else f"{len(self.cut_links)} cut links, lookahead {self.lookahead_ns} ns")
        return f"{self.ranks} MPI ranks (coupled partitions: {'+'.join(map(str, sizes))} switches, {ahead})"



def link_lookahead_ns(rate_bps: float, delay_ns: int, pipeline_ns: int) -> int:
    """The earliest a frame put on this link at t can reach the far switch's pipeline: t + this (whole ns,
    rounded down so the bound is never too long)."""
    return int(delay_ns + pipeline_ns + (MIN_FRAME + WIRE_OVERHEAD) * 8e9 / rate_bps)


def refusal(run: Any, sampling: bool) -> str:
    """Why coupled mode cannot reproduce this run exactly (empty: it can)."""
    fab = run.fabric
    eps = fab.endpoints
    if fab.link_ports:
        return "link layer: its ports' state spans both ends of a link"
    if getattr(eps, "inc", None) is not None:
        return "in-network all-reduce: the switches hold state of every member"
    if getattr(run.control.policy, "uses_probes", False):
        return "adaptive probes: the controller reads every switch's registers while the run goes on"
    if sampling:
        return "P4Runtime samples read every switch's queues while the run goes on"
    if any(f.plane is not None for f in eps.flows):
        return "plane spraying: the NIC's plane choice reads shared path health"
    for sw in fab.switches.values():
        state = getattr(sw.program, "state", None)
        if state is not None and (state.direct_counters or state.direct_meters):
            return f"switch {sw.name}: direct counters/meters live on table entries"
    return ""


def _constraints(run: Any, keep_zero_delay: bool) -> _Union:
    """Nodes that must share a rank: every NIC port with its switch, the couplings of the module's list, and
    (`keep_zero_delay`, an automatic split) both ends of a link with no delay at all."""
    fab = run.fabric
    eps = fab.endpoints
    topo = fab.topo
    eid_of = {ep.host: ep.eid for ep in topo.endpoints.values()}
    nodes = _Union()
    for name in fab.switches:
        nodes.find(("sw", name))
    for index, ln in enumerate(topo.links):
        a_sw, b_sw = ln.a.owner in fab.switches, ln.b.owner in fab.switches
        if a_sw != b_sw:
            sw, host = (ln.a.owner, ln.b.owner) if a_sw else (ln.b.owner, ln.a.owner)
            nodes.join(("sw", sw), ("nic", eid_of[host], ln.plane))
        elif a_sw and keep_zero_delay and fab.links[index].delay_ns + fab.config.pipeline_latency_ns == 0:
            nodes.join(("sw", ln.a.owner), ("sw", ln.b.owner))  # a zero-delay link is never cut
    nic_key = {id(nic): key for key, nic in eps.nics.items()}
    src = [("nic", *nic_key[id(f.nic)]) for f in eps.flows]
    dst = [("nic", *nic_key[id(f.rx_nic)]) for f in eps.flows]
    if not eps.reliable:
        for a, b in zip(src, dst, strict=True):
            nodes.join(a, b)
    graph = eps.graph
    for fid, deps in enumerate(graph.dependents):
        for d in deps:
            nodes.join(dst[fid], src[d])
    for ci, nxt in graph.coll_next.items():
        ends = [e for cj in (ci, *nxt) for fid in eps.colls[cj].flows for e in (src[fid], dst[fid])]
        for a, b in zip(ends, ends[1:], strict=False):
            nodes.join(a, b)
    return nodes


def plan_cut(run: Any, ranks: int, sampling: bool = False, explicit: list[list[str]] | None = None) -> Cut:
    """Split the loaded run's switches over `ranks` ranks (`explicit`: node names per rank, as the spec's
    `virtual.partition` lists them), or say why it stays in one process. Raises CutError for a partition
    that cannot be exact: a host link cut, a switch in no rank or two, a cut link with no delay at all."""
    fab = run.fabric
    topo = fab.topo
    if ranks <= 1:
        return Cut(reason="one rank")
    why = refusal(run, sampling)
    if why:
        if explicit is not None:
            raise CutError(f"virtual.partition: coupled partitions cannot reproduce this run exactly ({why})")
        return Cut(reason=why)
    nodes = _constraints(run, explicit is None)
    switches = [node.name for node in topo.switches]
    if explicit is not None:
        rank_of = _explicit(topo, fab, explicit, ranks)
        first: dict[Any, str] = {}  # a union constraint the user's partition breaks
        for name in switches:
            other = first.setdefault(nodes.find(("sw", name)), name)
            if rank_of[other] != rank_of[name]:
                raise CutError(f"virtual.partition: switches {other} and {name} must share a rank "
                               f"({_coupling_note(run)})")
    else:
        greedy = _greedy(topo, fab, nodes, switches, ranks)
        if greedy is None:
            return Cut(reason="the flows couple the whole fabric without delay (one piece)")
        rank_of = greedy
    used = len(set(rank_of.values()))
    cut = Cut(ranks=ranks, switch_rank=rank_of)
    eid_of = {ep.host: ep.eid for ep in topo.endpoints.values()}
    pipeline = fab.config.pipeline_latency_ns
    for index, ln in enumerate(topo.links):
        a, b = ln.a.owner, ln.b.owner
        if a in fab.switches and b in fab.switches:
            if rank_of[a] != rank_of[b]:
                cut.cut_links.append(index)
                link = fab.links[index]
                if link.delay_ns + pipeline == 0:
                    raise CutError(f"link {a}-{b} would be cut but has no propagation delay and the switches "
                                   "no pipeline latency: lookahead 0 (a zero-delay cut); keep its ends on one "
                                   "rank or give it a delay")
                cut.lookahead_ns = min(cut.lookahead_ns, link_lookahead_ns(link.rate_bps, link.delay_ns, pipeline))
        else:
            sw, host = (a, b) if a in fab.switches else (b, a)
            cut.nic_rank[(eid_of[host], ln.plane)] = rank_of[sw]
    if used < 2 and explicit is None:
        return Cut(reason="one coupled piece")
    return cut


def _coupling_note(run: Any) -> str:
    eps = run.fabric.endpoints
    if not eps.reliable:
        return "under transport none a flow's source and destination interact in-process, without delay"
    return "a flow that starts when another is delivered, or a collective after another, joins their hosts"


def _explicit(topo: Any, fab: Any, explicit: list[list[str]], ranks: int) -> dict[str, int]:
    if len(explicit) != ranks:
        raise CutError(f"virtual.partition lists {len(explicit)} ranks, the run has {ranks}")
    rank_of: dict[str, int] = {}
    host_rank: dict[str, int] = {}
    for k, names in enumerate(explicit):
        for name in names:
            if name in fab.switches:
                if name in rank_of:
                    raise CutError(f"virtual.partition: switch {name} is in ranks {rank_of[name]} and {k}")
                rank_of[name] = k
            elif name in topo.endpoints:
                host_rank[name] = k
            else:
                raise CutError(f"virtual.partition: rank {k} lists {name!r}, which is no switch or host of the "
                               "topology")
    missing = [node.name for node in topo.switches if node.name not in rank_of]
    if missing:
        raise CutError(f"virtual.partition: switch(es) {', '.join(missing)} in no rank")
    for ln in topo.links:
        for host, sw in ((ln.a.owner, ln.b.owner), (ln.b.owner, ln.a.owner)):
            if host in host_rank and sw in rank_of and host_rank[host] != rank_of[sw]:
                raise CutError(f"virtual.partition cuts the host link {ln.a}-{ln.b} ({host} on rank "
                               f"{host_rank[host]}, {sw} on rank {rank_of[sw]}): a host's NIC port must live "
                               "with its switch")
    return rank_of


def _greedy(topo: Any, fab: Any, nodes: _Union, switches: list[str], ranks: int) -> dict[str, int] | None:
    """Graph growing over the pieces the constraints leave (each a set of switches and NIC ports): rank k
    takes pieces, neighbours with the most links to it first, until it holds its share of the work (switch
    ports + NIC ports). Deterministic: ties go to topology order."""
    piece_of: dict[str, Any] = {name: nodes.find(("sw", name)) for name in switches}
    order: list[Any] = []
    members: dict[Any, list[str]] = {}
    for name in switches:
        r = piece_of[name]
        if r not in members:
            members[r] = []
            order.append(r)
        members[r].append(name)
    if len(order) < 2:
        return None
    # the work a piece brings: a switch's ports (each one's frames pass its pipeline) and its hosts' NIC ports
    weight = dict.fromkeys(order, 0)
    adj: dict[Any, dict[Any, int]] = {r: {} for r in order}
    for ln in topo.links:
        a, b = ln.a.owner, ln.b.owner
        if a in fab.switches and b in fab.switches:
            pa, pb = piece_of[a], piece_of[b]
            weight[pa] += 1
            weight[pb] += 1
            if pa != pb:
                adj[pa][pb] = adj[pa].get(pb, 0) + 1
                adj[pb][pa] = adj[pb].get(pa, 0) + 1
        else:
            weight[piece_of[a if a in fab.switches else b]] += 2  # a switch port and the NIC port on it
    index = {r: i for i, r in enumerate(order)}
    total = sum(weight.values())
    left = set(order)
    rank_piece: dict[Any, int] = {}
    for k in range(ranks):
        if not left:
            break
        if k == ranks - 1:
            for r in left:
                rank_piece[r] = k
            break
        target = (total - sum(weight[r] for r in rank_piece)) / (ranks - k)
        seed = min(left, key=lambda r: (-weight[r], index[r]))
        mine, load = [seed], weight[seed]
        left.discard(seed)
        while load < target and left:
            link = {r: sum(adj[m].get(r, 0) for m in mine) for r in left}
            best = min(left, key=lambda r: (-link[r], -weight[r] if load + weight[r] <= target else weight[r],
                                            index[r]))
            if load + weight[best] > target and load + weight[best] - target > target - load:
                break  # taking it would overshoot the share more than stopping short
            mine.append(best)
            load += weight[best]
            left.discard(best)
        for r in mine:
            rank_piece[r] = k
    return {name: rank_piece[piece_of[name]] for name in switches}
