"""Reconciliation compares data, not serialized bytes: what a switch answers in another byte form (leading
zero bytes, ternary bits outside the mask) is the same entry with the same action; a real difference is a
MODIFY, a missing entry an INSERT, an unwanted one a DELETE."""

from __future__ import annotations

from p4.v1 import p4runtime_pb2 as pb

from controller.artifacts import build_artifacts
from controller.client import SwitchConnection, as_entity
from controller.reconcile import diff, entity_key, entity_value


def _conn() -> SwitchConnection:
    return SwitchConnection("127.0.0.1:1", p4info=build_artifacts().p4info, name="offline")


def _eid_entry(conn: SwitchConnection, eid: int, gid: int) -> pb.Entity:
    return as_entity(conn.table_entry("eid_table", {"hdr.ethplus.dst_id": eid}, "eid_to_group",
                                      {"group_id": gid, "dst_index": eid}))


def _padded(entity: pb.Entity) -> pb.Entity:
    """The same entity as a switch might answer it: every value with a leading zero byte."""
    other = pb.Entity()
    other.CopyFrom(entity)
    te = other.table_entry
    for m in te.match:
        m.exact.value = b"\x00" + m.exact.value
    for p in te.action.action.params:
        p.value = b"\x00" + p.value
    return other


def test_other_byte_form_is_the_same_entry() -> None:
    conn = _conn()
    wanted = _eid_entry(conn, 5, 2)
    answered = _padded(wanted)
    assert answered.SerializeToString() != wanted.SerializeToString()
    assert entity_key(answered) == entity_key(wanted) and entity_value(answered) == entity_value(wanted)
    change = diff([wanted], [answered])
    assert len(change) == 0 and change.unchanged == 1


def test_differences_become_insert_modify_delete() -> None:
    conn = _conn()
    keep, moved, missing = _eid_entry(conn, 1, 1), _eid_entry(conn, 2, 1), _eid_entry(conn, 3, 1)
    extra = _eid_entry(conn, 9, 1)
    on_switch = [_padded(keep), _padded(_eid_entry(conn, 2, 4)), extra]
    change = diff([keep, moved, missing], on_switch)
    assert change.unchanged == 1
    assert [u.entity for u in change.inserts] == [missing]
    assert [u.entity for u in change.modifies] == [moved]
    assert [u.entity for u in change.deletes] == [extra]


def test_ternary_bits_outside_the_mask_do_not_count() -> None:
    a, b = pb.FieldMatch(field_id=1), pb.FieldMatch(field_id=1)
    a.ternary.value, a.ternary.mask = b"\x0f", b"\x0f"
    b.ternary.value, b.ternary.mask = b"\xff", b"\x0f"
    ea, eb = pb.Entity(), pb.Entity()
    ea.table_entry.table_id = eb.table_entry.table_id = 7
    ea.table_entry.match.append(a)
    eb.table_entry.match.append(b)
    assert entity_key(ea) == entity_key(eb)
