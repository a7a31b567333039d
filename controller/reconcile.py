"""Reconciliation: compare what a switch holds (read over P4Runtime) with what the controller wants, and
produce only the writes that close the gap.

A restarted controller must not blindly re-insert (every update would fail with ALREADY_EXISTS) nor wipe the
switch (traffic would stop): it reads, diffs and writes the difference. Entities are keyed the way the
P4Runtime spec identifies them (table entry: table + match + priority; member/group: profile + id), and
compared as decoded data (numbers per field/parameter id), not as serialized bytes: a switch may answer a
value in another byte form (leading zeros) and it is still the same entry.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from p4.v1 import p4runtime_pb2 as pb

from controller.client import SwitchConnection, as_entity
from controller.codec import decode
from p4exec.entry_codec import numbers

Key = tuple


@dataclass
class Diff:
    """Updates to send, in an order the switch accepts (members before groups before entries; deletes
    in reverse), and how many wanted entities were already right."""

    inserts: list[pb.Update] = field(default_factory=list)
    modifies: list[pb.Update] = field(default_factory=list)
    deletes: list[pb.Update] = field(default_factory=list)
    unchanged: int = 0

    @property
    def updates(self) -> list[pb.Update]:
        return self.inserts + self.modifies + self.deletes

    def __len__(self) -> int:
        return len(self.inserts) + len(self.modifies) + len(self.deletes)


_RANK = {"action_profile_member": 0, "action_profile_group": 1, "table_entry": 2}


def _num(raw: bytes) -> int:
    return decode(raw) if raw else 0


def match_key(m: pb.FieldMatch) -> tuple[Any, ...]:
    """One match field as numbers: a switch may answer another byte form of the same value (leading zero
    bytes), which is still the same entry; a ternary value counts only under its mask."""
    kind, values = numbers(m)
    if kind is None:
        return (m.field_id, m.WhichOneof("field_match_type"))
    if kind.name == "ternary":
        value, mask = values
        values = (value & mask, mask)
    return (m.field_id, kind.name, *values)


def action_value(action: pb.Action) -> tuple[Any, ...]:
    return (action.action_id, tuple(sorted((p.param_id, _num(p.value)) for p in action.params)))


def table_action_value(ta: pb.TableAction) -> tuple[Any, ...]:
    kind = ta.WhichOneof("type")
    if kind == "action":
        return (kind, action_value(ta.action))
    if kind == "action_profile_member_id":
        return (kind, ta.action_profile_member_id)
    if kind == "action_profile_group_id":
        return (kind, ta.action_profile_group_id)
    if kind == "action_profile_action_set":
        return (kind, tuple(sorted((action_value(a.action), a.weight, a.watch_port)
                                   for a in ta.action_profile_action_set.action_profile_actions)))
    return (kind,)


def entity_key(entity: pb.Entity) -> Key:
    kind = entity.WhichOneof("entity")
    if kind == "table_entry":
        te = entity.table_entry
        return (kind, te.table_id, tuple(sorted(match_key(m) for m in te.match)), te.priority, te.is_default_action)
    if kind == "action_profile_member":
        return (kind, entity.action_profile_member.action_profile_id, entity.action_profile_member.member_id)
    if kind == "action_profile_group":
        return (kind, entity.action_profile_group.action_profile_id, entity.action_profile_group.group_id)
    if kind == "packet_replication_engine_entry":
        pre = entity.packet_replication_engine_entry
        which = pre.WhichOneof("type")
        ident = pre.multicast_group_entry.multicast_group_id if which == "multicast_group_entry" \
            else pre.clone_session_entry.session_id
        return (kind, which, ident)
    raise ValueError(f"reconciliation does not handle {kind}")


def entity_value(entity: pb.Entity) -> tuple[Any, ...]:
    """The part of an entity a MODIFY would change, as data."""
    kind = entity.WhichOneof("entity")
    if kind == "table_entry":
        return table_action_value(entity.table_entry.action)
    if kind == "action_profile_member":
        return action_value(entity.action_profile_member.action)
    if kind == "action_profile_group":
        group = entity.action_profile_group
        return (tuple(sorted((m.member_id, m.weight or 1) for m in group.members)), group.max_size)
    if kind == "packet_replication_engine_entry":
        pre = entity.packet_replication_engine_entry
        body = pre.multicast_group_entry if pre.HasField("multicast_group_entry") else pre.clone_session_entry
        return tuple(sorted((r.egress_port, r.instance) for r in body.replicas))
    raise ValueError(f"reconciliation does not handle {kind}")


def diff(wanted: Iterable[pb.Entity], actual: Iterable[pb.Entity], delete_extra: bool = True) -> Diff:
    """Inserts for missing entities, modifies for different ones, deletes for ones nobody wants."""
    have = {entity_key(e): e for e in actual}
    result = Diff()
    seen: set[Key] = set()
    for entity in sorted(wanted, key=lambda e: _RANK.get(e.WhichOneof("entity"), 3)):
        key = entity_key(entity)
        seen.add(key)
        current = have.get(key)
        if current is None:
            kind = pb.Update.MODIFY if key[0] == "table_entry" and key[-1] else pb.Update.INSERT
            (result.modifies if kind == pb.Update.MODIFY else result.inserts).append(pb.Update(type=kind,
                                                                                               entity=entity))
        elif entity_value(current) != entity_value(entity):
            result.modifies.append(pb.Update(type=pb.Update.MODIFY, entity=entity))
        else:
            result.unchanged += 1
    if delete_extra:
        extra = [e for k, e in have.items() if k not in seen and not (k[0] == "table_entry" and k[-1])]
        for entity in sorted(extra, key=lambda e: -_RANK.get(e.WhichOneof("entity"), 3)):
            result.deletes.append(pb.Update(type=pb.Update.DELETE, entity=entity))
    return result


def read_state(conn: SwitchConnection, wanted: Iterable[pb.Entity]) -> list[pb.Entity]:
    """Everything of the kinds in `wanted` that the switch holds: all table entries, members, groups, PRE
    entries, plus the default entries of the tables whose default `wanted` sets."""
    wanted = list(wanted)
    queries: list[pb.Entity] = [as_entity(pb.TableEntry()), as_entity(pb.ActionProfileMember()),
                                as_entity(pb.ActionProfileGroup())]
    pre = pb.PacketReplicationEngineEntry()
    pre.multicast_group_entry.multicast_group_id = 0
    if any(e.WhichOneof("entity") == "packet_replication_engine_entry" for e in wanted):
        queries.append(as_entity(pre))
    for entity in wanted:
        if entity.WhichOneof("entity") == "table_entry" and entity.table_entry.is_default_action:
            queries.append(as_entity(pb.TableEntry(table_id=entity.table_entry.table_id, is_default_action=True)))
    found: list[pb.Entity] = []
    for query in queries:
        found.extend(conn.read(query))
    return [e for e in found if not (e.WhichOneof("entity") == "table_entry" and e.table_entry.is_const)]
