"""ROLLBACK_ON_ERROR and DATAPLANE_ATOMIC batches: undo what a failed batch already did.

Before each update the server reads the state it is about to change (with the same
Read code the RPC uses) and keeps the updates that would restore it. If a later
update fails, those are applied in reverse order, so the device ends as it was.
"""

from __future__ import annotations

import logging

from google.protobuf import struct_pb2
from p4.v1 import p4runtime_pb2

from p4exec.p4runtime import dispatch
from p4exec.p4runtime.errors import P4RuntimeError

log = logging.getLogger(__name__)
U = p4runtime_pb2.Update
_INDEXED = {"counter_entry", "meter_entry", "register_entry", "direct_counter_entry",
            "direct_meter_entry", "value_set_entry", "extern_entry"}
_DATA_FIELDS = {"counter_entry": ("data",), "meter_entry": ("config", "counter_data"),
                "register_entry": ("data",), "direct_counter_entry": ("data",),
                "direct_meter_entry": ("config", "counter_data"), "value_set_entry": ("members",),
                "extern_entry": ("entry",)}


def _probe(update: p4runtime_pb2.Update) -> p4runtime_pb2.Entity:
    """A Read request for exactly the state `update` touches."""
    ent = p4runtime_pb2.Entity()
    ent.CopyFrom(update.entity)
    kind = ent.WhichOneof("entity")
    msg = getattr(ent, kind)
    if kind == "table_entry":
        for f in ("action", "idle_timeout_ns", "metadata", "controller_metadata"):
            msg.ClearField(f)
        if not msg.is_default_action:
            msg.counter_data.SetInParent()
            msg.meter_config.SetInParent()
    elif kind == "action_profile_member":
        msg.ClearField("action")
    elif kind == "action_profile_group":
        msg.ClearField("members")
        msg.ClearField("max_size")
    elif kind == "packet_replication_engine_entry":
        inner = getattr(msg, msg.WhichOneof("type"))
        inner.ClearField("replicas")
        for f in ("class_of_service", "packet_length_bytes", "metadata"):
            if f in inner.DESCRIPTOR.fields_by_name:
                inner.ClearField(f)
    elif kind == "digest_entry":
        msg.ClearField("config")
    elif kind in _DATA_FIELDS:
        for f in _DATA_FIELDS[kind]:
            msg.ClearField(f)
    return ent


def undo_for(ctx, device, update: p4runtime_pb2.Update) -> list[p4runtime_pb2.Update]:
    """Updates that restore what `update` is about to change (empty if it cannot succeed)."""
    kind = update.entity.WhichOneof("entity")
    if kind is None:
        return []  # the write will refuse it
    if kind == "table_entry" and update.entity.table_entry.is_default_action:
        return [_default_undo(ctx, update.entity.table_entry.table_id)]
    try:
        old = list(dispatch.read_entity(ctx, device, _probe(update)))
    except P4RuntimeError:
        return []
    if kind == "extern_entry":
        for ent in old:
            st = struct_pb2.Struct()
            ent.extern_entry.entry.Unpack(st)
            st.fields.pop("up", None)
            ent.extern_entry.entry.Pack(st)
    if kind in _INDEXED:
        return [U(type=U.MODIFY, entity=e) for e in old]
    if update.type == U.INSERT:
        return [U(type=U.DELETE, entity=update.entity)] if not old else []
    if update.type == U.MODIFY:
        return [U(type=U.MODIFY, entity=e) for e in old]
    return [U(type=U.INSERT, entity=e) for e in old]


def _default_undo(ctx, table_id: int) -> p4runtime_pb2.Update:
    """Restore a table's default entry: the controller's last one, or a reset to the program's own.

    A reset (MODIFY without action, spec 9.1.4) and not a MODIFY naming the program's default: an
    implicit NoAction is not among the table's action_refs, so such a MODIFY would be refused."""
    entry = p4runtime_pb2.TableEntry(table_id=table_id, is_default_action=True)
    table = ctx.index.table(table_id)
    current = ctx.binding.current_default(table) if ctx.binding.default_changed(table) else None
    if current is not None:
        entry.action.action.CopyFrom(current)
    return U(type=U.MODIFY, entity=p4runtime_pb2.Entity(table_entry=entry))


def run_all_or_nothing(ctx, device, updates) -> list[P4RuntimeError | None]:
    """Apply `updates` in order; on the first failure undo the applied ones.

    Returns one error per update: the failure's own error, ABORTED for every other
    update (rolled back or never tried), or all None on success.
    """
    done: list[list[p4runtime_pb2.Update]] = []
    for i, update in enumerate(updates):
        try:
            undo = undo_for(ctx, device, update)
            dispatch.write_update(ctx, device, update)
        except Exception as exc:  # noqa: BLE001 - any failure rolls the batch back
            err = exc if isinstance(exc, P4RuntimeError) else P4RuntimeError("INTERNAL", repr(exc))
            _roll_back(ctx, device, done)
            aborted = P4RuntimeError("ABORTED", "rolled back: another update of the batch failed")
            return [err if j == i else aborted for j in range(len(updates))]
        done.append(undo)
    return [None] * len(updates)


def _roll_back(ctx, device, done: list[list[p4runtime_pb2.Update]]) -> None:
    """Undo in reverse order; a step that fails is logged and the others still run."""
    for steps in reversed(done):
        for step in steps:
            try:
                dispatch.write_update(ctx, device, step)
            except Exception:  # noqa: BLE001 - keep undoing the rest
                log.exception("rolling back an all-or-nothing batch: an undo step failed")
