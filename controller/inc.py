"""In-network aggregation jobs (p4src/ethplus_inc.p4): which switches of a plane aggregate for which endpoints,
with which slots, written over P4Runtime and read back after a controller restart.

A job is a set of member endpoints on one plane. Its aggregation tree follows the plane's switch tiers: the
switch every member is cabled to aggregates alone (ERack+, one switch per plane); when members sit under
several leaves, each such leaf sums its own members and a spine cabled to all of them sums the leaves
(two levels, UPN / leaf-spine). At every switch of the tree the job gets a table entry (`inc_job`), one
entry per contributor port (`inc_member`), a multicast group of its downward ports, and `slots` consecutive
slots of the switch's pool, which is shared by all jobs: two jobs never get the same slot, and a pool too
small for a new job is an error (the job is refused, nothing is written; the caller may run another
algorithm instead). The switches are the record of the jobs: a restarted controller reads `inc_job` and
`inc_member` back (`IncJobs.adopt`) before it reconciles, so the reconciliation keeps them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from p4.v1 import p4runtime_pb2 as pb

from controller.client import as_entity
from controller.codec import decode
from topologies.model import Topology

if TYPE_CHECKING:
    from controller.client import SwitchConnection
    from controller.messages import UpdateLike

SLOTS = 256  # INC_SLOTS of p4src/include/inc_headers.p4: slots per switch
MAX_CONTRIBUTORS = 64  # bitmap width: contributors one switch counts per slot
MAX_JOB_ID = 4095
MGRP_BASE = 2000  # multicast group of job j: MGRP_BASE + j (probes use 1000; BMv2 refused 0x8000 + j as too high)
JOB_TABLE, MEMBER_TABLE = "inc_job", "inc_member"
PER_COPY_REGISTERS = ("inc_seen", "inc_count", "inc_ranks", "inc_chunk", "inc_has_result")


class IncError(ValueError):
    """A job the fabric cannot run as asked; `code` is the P4Runtime status name it corresponds to."""

    def __init__(self, message: str, code: str = "INVALID_ARGUMENT") -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class SwitchPart:
    """What one switch holds for a job."""

    switch: str
    slot_base: int
    n_slots: int
    contributors: tuple[tuple[int, int], ...]  # (ingress port, contributor index)
    down_ports: tuple[int, ...]  # where results go (the job's multicast group)
    level: int  # 1 at the switches the endpoints are cabled to
    is_top: bool
    up_port: int = 0

    @property
    def n_contrib(self) -> int:
        return len(self.contributors)


@dataclass(frozen=True)
class IncJob:
    job_id: int
    members: tuple[int, ...]  # endpoint ids
    plane: int
    slots: int  # slots per switch: the most chunks a member has in flight
    parts: dict[str, SwitchPart] = field(compare=False)

    @property
    def mgrp(self) -> int:
        return MGRP_BASE + self.job_id

    def access_switch(self, topo: Topology, eid: int) -> tuple[str, int]:
        """(switch, port) the member's plane interface is cabled to."""
        return _access(topo, eid, self.plane)


def _access(topo: Topology, eid: int, plane: int) -> tuple[str, int]:
    ep = topo.endpoint_by_id(eid)
    iface = ep.interfaces.get(plane)
    if iface is None:
        raise IncError(f"endpoint {eid} has no interface on plane {plane}")
    far = topo.neighbor(ep.host, iface.port)
    return far.owner, far.number


def plan_tree(topo: Topology, members: Sequence[int], plane: int) -> dict[str, tuple[list[tuple[int, int]],
                                                                                      int, bool, int]]:
    """switch -> (contributor ports with their indices, level, is_top, up_port) of the aggregation tree."""
    leaves: dict[str, list[int]] = {}
    for eid in members:
        sw, port = _access(topo, eid, plane)
        leaves.setdefault(sw, []).append(port)
    if len(leaves) == 1:
        (sw, ports), = leaves.items()
        return {sw: ([(p, i) for i, p in enumerate(sorted(ports))], 1, True, 0)}
    common: set[str] | None = None
    links: dict[tuple[str, str], int] = {}  # (leaf, spine) -> port on the leaf
    for leaf in leaves:
        ups = set()
        for port, ln in sorted(topo.ports(leaf).items()):
            far = ln.other(leaf)
            if far.owner in topo.nodes and topo.nodes[far.owner].is_switch:
                ups.add(far.owner)
                links.setdefault((leaf, far.owner), port)
        common = ups if common is None else common & ups
    if not common:
        raise IncError(f"plane {plane}: no switch is cabled to every leaf of the members "
                       f"({', '.join(sorted(leaves))}); in-network aggregation needs one or two switch tiers",
                       "UNIMPLEMENTED")
    root = sorted(common)[0]
    tree: dict[str, tuple[list[tuple[int, int]], int, bool, int]] = {}
    root_ports = []
    for leaf, ports in sorted(leaves.items()):
        tree[leaf] = ([(p, i) for i, p in enumerate(sorted(ports))], 1, False, links[(leaf, root)])
        root_ports.append(topo.ports(leaf)[links[(leaf, root)]].other(leaf).number)
    tree[root] = ([(p, i) for i, p in enumerate(sorted(root_ports))], 2, True, 0)
    return tree


class IncJobs:
    """The jobs of one fabric controller (`FabricController.inc`). Every method runs under the controller's
    lock; a refused request changes nothing."""

    def __init__(self, controller: Any) -> None:
        self.controller = controller
        self.jobs: dict[int, IncJob] = {}

    # ---- queries --------------------------------------------------------------------------------------
    def supported(self, conn: SwitchConnection) -> bool:
        try:
            conn._index().table(JOB_TABLE)
        except Exception:  # noqa: BLE001 - not the INC program
            return False
        return True

    def used_slots(self, switch: str, but: int | None = None) -> list[tuple[int, int, int]]:
        """(base, count, job) of the slot ranges a switch gives to jobs."""
        return sorted((p.slot_base, p.n_slots, j.job_id) for j in self.jobs.values() if j.job_id != but
                      for p in j.parts.values() if p.switch == switch)

    def _free_base(self, switch: str, n: int, want: int | None) -> int:
        used = self.used_slots(switch)
        if want is not None:
            if want < 0 or want + n > SLOTS:
                raise IncError(f"{switch}: slots {want}..{want + n - 1} are outside the pool of {SLOTS}",
                               "OUT_OF_RANGE")
            for base, count, job in used:
                if want < base + count and base < want + n:
                    raise IncError(f"{switch}: slots {want}..{want + n - 1} overlap job {job}'s slots "
                                   f"{base}..{base + count - 1}", "ALREADY_EXISTS")
            return want
        at = 0
        for base, count, _job in used:
            if base - at >= n:
                return at
            at = max(at, base + count)
        if SLOTS - at >= n:
            return at
        raise IncError(f"{switch}: no {n} free aggregation slots left (pool of {SLOTS}, used by jobs "
                       f"{sorted({j for _b, _c, j in used})})", "RESOURCE_EXHAUSTED")

    # ---- transitions ----------------------------------------------------------------------------------
    def setup(self, job_id: int, members: Sequence[int], plane: int = 0, slots: int = 32,
              slot_base: int | None = None) -> IncJob:
        """Validate, allocate and write a job on every switch of its tree; returns it."""
        ctl = self.controller
        topo: Topology = ctl.topo
        if not isinstance(job_id, int) or not 1 <= job_id <= MAX_JOB_ID:
            raise IncError(f"job id must be 1..{MAX_JOB_ID} (got {job_id!r})")
        members = tuple(int(m) for m in members)
        if len(members) < 2 or len(set(members)) != len(members):
            raise IncError(f"a job needs at least 2 distinct members (got {list(members)})")
        if not isinstance(slots, int) or not 1 <= slots <= SLOTS:
            raise IncError(f"slots must be 1..{SLOTS} (got {slots!r})", "OUT_OF_RANGE")
        with ctl.lock:
            if job_id in self.jobs:
                raise IncError(f"job {job_id} exists already", "ALREADY_EXISTS")
            for eid in members:
                try:
                    topo.endpoint_by_id(eid)
                except Exception:  # noqa: BLE001
                    raise IncError(f"job {job_id}: no endpoint {eid} in the topology", "NOT_FOUND") from None
            tree = plan_tree(topo, members, plane)
            parts: dict[str, SwitchPart] = {}
            for sw, (contrib, level, top, up) in tree.items():
                if len(contrib) > MAX_CONTRIBUTORS:
                    raise IncError(f"job {job_id}: {len(contrib)} contributors at {sw}, more than the "
                                   f"{MAX_CONTRIBUTORS} its slot bitmap holds", "OUT_OF_RANGE")
                conn = ctl.connection(sw)
                if not self.supported(conn):
                    raise IncError(f"{sw} does not run the aggregation program (p4src/ethplus_inc.p4)",
                                   "FAILED_PRECONDITION")
                base = self._free_base(sw, slots, slot_base)
                down = tuple(sorted(p for p, _i in contrib))
                parts[sw] = SwitchPart(sw, base, slots, tuple(contrib), down, level, top, up)
            job = IncJob(job_id, members, plane, slots, parts)
            for sw, part in parts.items():
                conn = ctl.connection(sw)
                conn.write(self._updates(conn, job, part, pb.Update.INSERT))
                self._reset_slots(conn, part)
            self.jobs[job_id] = job
            ctl.note("inc_job_setup", ",".join(sorted(parts)), f"job {job_id}: {len(members)} members, "
                     f"{slots} slots per switch")
            return job

    def teardown(self, job_id: int) -> None:
        ctl = self.controller
        with ctl.lock:
            job = self.jobs.get(job_id)
            if job is None:
                raise IncError(f"no job {job_id}", "NOT_FOUND")
            for sw, part in job.parts.items():
                conn = ctl.connection(sw)
                conn.write(list(reversed(self._updates(conn, job, part, pb.Update.DELETE))))
                self._reset_slots(conn, part)
            del self.jobs[job_id]
            ctl.note("inc_job_teardown", ",".join(sorted(job.parts)), f"job {job_id}")

    # ---- what the switches hold -----------------------------------------------------------------------
    def _updates(self, conn: SwitchConnection, job: IncJob, part: SwitchPart, kind: int) -> list[UpdateLike]:
        out: list[UpdateLike] = [pb.Update(type=kind, entity=as_entity(
            conn.multicast_group(job.mgrp, [(p, 1) for p in part.down_ports])))]
        out.append(conn.entry_update(kind, JOB_TABLE, {"hdr.inc.job_id": job.job_id}, "inc_set_job", {
            "slot_base_": part.slot_base, "n_slots_": part.n_slots, "n_contrib_": part.n_contrib,
            "mgrp_": job.mgrp, "level_": part.level, "is_top_": int(part.is_top), "up_port_": part.up_port}))
        for port, index in part.contributors:
            out.append(conn.entry_update(kind, MEMBER_TABLE, {"hdr.inc.job_id": job.job_id,
                                                              "standard_metadata.ingress_port": port},
                                         "inc_set_member", {"index": index}))
        return out

    def updates(self, switch: str, conn: SwitchConnection) -> list[UpdateLike]:
        """INSERTs of every job's entries on `switch`: part of what the controller installs or reconciles."""
        return [u for job in self.jobs.values() for sw, part in job.parts.items() if sw == switch
                for u in self._updates(conn, job, part, pb.Update.INSERT)]

    @staticmethod
    def _reset_slots(conn: SwitchConnection, part: SwitchPart) -> None:
        """Zero the per-copy state of the job's slots (both copies), so a reused range starts clean."""
        index = conn._index()
        entries = []
        for name in PER_COPY_REGISTERS:
            reg = index.get("registers", name)
            width = reg.type_spec.bitstring.bit.bitwidth  # type: ignore[attr-defined]
            for copy in range(2 * part.slot_base, 2 * (part.slot_base + part.n_slots)):
                entry = pb.RegisterEntry(register_id=reg.preamble.id)  # type: ignore[attr-defined]
                entry.index.index = copy
                entry.data.bitstring = (0).to_bytes((width + 7) // 8, "big")
                entries.append(entry)
        conn.modify(*entries)

    def adopt(self, switches: Iterable[str] | None = None) -> list[int]:
        """Rebuild the job list from what the switches hold (a restarted controller); returns the job ids."""
        ctl = self.controller
        topo: Topology = ctl.topo
        found: dict[int, dict[str, SwitchPart]] = {}
        with ctl.lock:
            for sw in switches if switches is not None else sorted(ctl.state.connections):
                conn = ctl.connection(sw)
                if not self.supported(conn):
                    continue
                members: dict[int, list[tuple[int, int]]] = {}
                for te in conn.read_table(MEMBER_TABLE):
                    job_id, port = (decode(m.exact.value) for m in te.match)
                    members.setdefault(job_id, []).append((port, decode(te.action.action.params[0].value)))
                for te in conn.read_table(JOB_TABLE):
                    job_id = decode(te.match[0].exact.value)
                    p = [decode(x.value) for x in te.action.action.params]
                    contrib = tuple(sorted(members.get(job_id, []), key=lambda pi: pi[1]))
                    found.setdefault(job_id, {})[sw] = SwitchPart(
                        sw, p[0], p[1], contrib, tuple(sorted(port for port, _i in contrib)), p[4], bool(p[5]),
                        p[6])
            for job_id, parts in found.items():
                eids: list[int] = []
                plane = 0
                for sw, part in parts.items():
                    if part.level != 1:
                        continue
                    plane = topo.nodes[sw].plane or 0
                    for port, _index in part.contributors:
                        far = topo.neighbor(sw, port).owner
                        if far in topo.endpoints:
                            eids.append(topo.endpoints[far].eid)
                slots = next(iter(parts.values())).n_slots
                self.jobs[job_id] = IncJob(job_id, tuple(sorted(eids)), plane, slots, parts)
        return sorted(found)
