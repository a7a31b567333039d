"""Entity kind -> write/read handler, for Write, Read and RECONCILE_AND_COMMIT."""

from __future__ import annotations

from collections.abc import Iterator

from p4.v1 import p4runtime_pb2

from p4exec.p4runtime import entities, externs
from p4exec.p4runtime.context import Context
from p4exec.p4runtime.errors import P4RuntimeError, invalid

U = p4runtime_pb2.Update

_WRITERS = {
    "table_entry": entities.write_table_entry,
    "action_profile_member": entities.write_member,
    "action_profile_group": entities.write_group,
    "counter_entry": externs.write_counter,
    "direct_counter_entry": externs.write_direct_counter,
    "meter_entry": externs.write_meter,
    "direct_meter_entry": externs.write_direct_meter,
    "register_entry": externs.write_register,
    "packet_replication_engine_entry": externs.write_pre,
    "digest_entry": externs.write_digest,
    "value_set_entry": externs.write_value_set,
}

_READERS = {
    "table_entry": entities.read_table_entries,
    "action_profile_member": entities.read_members,
    "action_profile_group": entities.read_groups,
    "counter_entry": externs.read_counters,
    "direct_counter_entry": externs.read_direct_counters,
    "meter_entry": externs.read_meters,
    "direct_meter_entry": externs.read_direct_meters,
    "register_entry": externs.read_registers,
    "packet_replication_engine_entry": externs.read_pre,
    "digest_entry": externs.read_digests,
    "value_set_entry": externs.read_value_sets,
}


def write_update(ctx: Context | None, device, update: p4runtime_pb2.Update) -> None:
    if update.type not in (U.INSERT, U.MODIFY, U.DELETE):
        raise invalid("update type must be INSERT, MODIFY or DELETE")
    kind = update.entity.WhichOneof("entity")
    if kind is None:
        raise invalid("the update carries no entity")
    if kind == "extern_entry":
        externs.write_extern(ctx, device, update.type, update.entity.extern_entry)
        return
    writer = _WRITERS.get(kind)
    if writer is None:
        raise P4RuntimeError("UNIMPLEMENTED", f"writing {kind} is not supported")
    writer(_pipeline(ctx), update.type, getattr(update.entity, kind))


def read_entity(ctx: Context | None, device, entity: p4runtime_pb2.Entity) -> Iterator[p4runtime_pb2.Entity]:
    kind = entity.WhichOneof("entity")
    if kind is None:
        raise invalid("the read request names no entity")
    if kind == "extern_entry":
        return externs.read_externs(ctx, device, entity.extern_entry)
    reader = _READERS.get(kind)
    if reader is None:
        raise P4RuntimeError("UNIMPLEMENTED", f"reading {kind} is not supported")
    return reader(_pipeline(ctx), getattr(entity, kind))


def _pipeline(ctx: Context | None) -> Context:
    """Every entity but the queue extern needs a pipeline (the service checks it first)."""
    if ctx is None:
        raise P4RuntimeError("FAILED_PRECONDITION", "no forwarding pipeline config is set")
    return ctx


# Order in which a reconciled pipeline gets the old state back (referenced things first).
RECONCILE_ORDER = (
    "action_profile_member", "action_profile_group", "table_entry", "counter_entry",
    "meter_entry", "register_entry", "packet_replication_engine_entry", "digest_entry",
    "value_set_entry",
)


def snapshot(ctx: Context, device) -> list[p4runtime_pb2.Update]:
    """The old pipeline's state as MODIFY/INSERT updates (for RECONCILE_AND_COMMIT)."""
    updates = []
    for kind in RECONCILE_ORDER:
        probe = p4runtime_pb2.Entity()
        getattr(probe, kind).SetInParent()
        if kind == "table_entry":  # direct resources travel with their entries
            probe.table_entry.counter_data.SetInParent()
            probe.table_entry.meter_config.SetInParent()
        for ent in read_entity(ctx, device, probe):
            if kind == "table_entry" and ent.table_entry.is_const:
                continue  # the new program brings its own const entries
            modify_only = kind in ("counter_entry", "meter_entry", "register_entry", "value_set_entry")
            updates.append(p4runtime_pb2.Update(type=U.MODIFY if modify_only else U.INSERT,
                                                entity=ent))
        if kind == "table_entry":
            for table in ctx.index.p4info.tables:
                if ctx.binding.default_changed(table):
                    ent = p4runtime_pb2.Entity(table_entry=entities.default_entry(ctx, table))
                    updates.append(p4runtime_pb2.Update(type=U.MODIFY, entity=ent))
    return updates
