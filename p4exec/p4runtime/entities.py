"""Write and Read of table entries and action profile members/groups.

A table entry is decoded and validated once (translate.py) and handed to the runtime table, which
keeps it and is the only judge of existence, size, const-ness and references: it raises before it
changes anything, so a failure leaves the device as it was. Read encodes the runtime's entries.
Members and groups likewise live in the runtime action profiles only.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TypeAlias

from p4.v1 import p4runtime_pb2

from p4exec.p4runtime import oneshot
from p4exec.p4runtime.context import Context
from p4exec.p4runtime.errors import invalid, not_found
from p4exec.p4runtime.translate import (
    canonical_action,
    canonical_matches,
    canonical_table_entry,
    direct_counter_of,
    direct_meter_of,
    table_actions,
)

U = p4runtime_pb2.Update
Entity: TypeAlias = p4runtime_pb2.Entity


# -- table entries -----------------------------------------------------------------------------
def write_table_entry(ctx: Context, update_type: int, msg: p4runtime_pb2.TableEntry) -> None:
    """Decode once (translate.py: P4Info ids, widths, canonical bytes), then let the runtime table,
    the one store of entries, decide: it raises ALREADY_EXISTS, NOT_FOUND, RESOURCE_EXHAUSTED,
    PERMISSION_DENIED (const) and missing members/groups before it changes anything."""
    entry = canonical_table_entry(ctx.index, msg, update_type)
    table = ctx.index.table(entry.table_id)
    if entry.is_default_action:
        ctx.binding.table_default(table, entry.action.action if entry.HasField("action") else None)
        return
    if update_type == U.MODIFY and not entry.HasField("action"):
        # action (and the rest of the entry) unchanged: only direct resources
        found = ctx.binding.find(table, entry)
        if found is None:
            raise not_found(f"no such entry in table {table.preamble.name!r}")
        _set_direct(ctx, table, found, entry, update_type)
        return
    if update_type != U.DELETE:
        _check_oneshot_style(ctx, table, entry)
    found = _write_through(ctx, table, update_type, entry)
    if update_type != U.DELETE:
        _set_direct(ctx, table, found, entry, update_type)


def _set_direct(ctx: Context, table, found, entry: p4runtime_pb2.TableEntry, update_type: int) -> None:
    """The direct counter / meter values an INSERT or MODIFY carries, onto the runtime entry."""
    if entry.HasField("counter_data"):
        found.packet_count = entry.counter_data.packet_count
        found.byte_count = entry.counter_data.byte_count
    if entry.HasField("meter_config"):
        ctx.binding.direct_meter_set(table, found, entry.meter_config)
    elif update_type == U.MODIFY and direct_meter_of(ctx.index, table) is not None:
        ctx.binding.direct_meter_set(table, found, None)  # unset on MODIFY: back to all-green


def _write_through(ctx: Context, table, update_type: int, entry: p4runtime_pb2.TableEntry):
    """Apply the entry to the runtime table, realizing one-shot action sets as hidden groups;
    the runtime entry that holds it now (the deleted one for DELETE)."""
    key = (table.preamble.id, (ctx.binding.runtime_match(table, entry.match), entry.priority))
    old = ctx.store.oneshots.get(key)
    if entry.action.WhichOneof("type") != "action_profile_action_set":
        found = ctx.binding.table_write(table, update_type, entry)
        if old is not None:
            del ctx.store.oneshots[key]
            oneshot.release(ctx, old)
        return found
    pointing, made = oneshot.realize(ctx, table, entry)
    try:
        found = ctx.binding.table_write(table, update_type, pointing)
    except Exception:
        oneshot.release(ctx, made)
        raise
    ctx.store.oneshots[key] = made
    if old is not None:
        oneshot.release(ctx, old)
    return found


def _check_oneshot_style(ctx: Context, table, entry: p4runtime_pb2.TableEntry) -> None:
    ap_id = table.implementation_id
    if ap_id:
        oneshot.check_style(ctx, ap_id, entry.action.WhichOneof("type") == "action_profile_action_set")


def elapsed_since_hit(found) -> int:
    """Nanoseconds since a runtime entry was last hit (or inserted)."""
    if not found.last_hit_ns:
        return 0
    return max(0, time.monotonic_ns() - found.last_hit_ns)


def counter_data_of(found) -> p4runtime_pb2.CounterData:
    return p4runtime_pb2.CounterData(byte_count=found.byte_count, packet_count=found.packet_count)


def entry_of(ctx: Context, table, found) -> p4runtime_pb2.TableEntry:
    """What Read returns for a runtime entry: its canonical form, a one-shot's action set as written."""
    out = ctx.binding.entry_proto(table, found)
    made = ctx.store.oneshots.get((table.preamble.id, found.key))
    if made is not None:
        out.action.action_profile_action_set.CopyFrom(made.action_set)
    return out


def default_entry(ctx: Context, table) -> p4runtime_pb2.TableEntry:
    out = p4runtime_pb2.TableEntry(table_id=table.preamble.id, is_default_action=True)
    action = ctx.binding.current_default(table)
    if action is not None:
        out.action.action.CopyFrom(action)
        return out
    init = table.initial_default_action
    action_id = init.action_id or table.const_default_action_id
    if action_id:
        out.action.action.action_id = action_id
        for i, arg in enumerate(init.arguments):
            out.action.action.params.add(param_id=arg.param_id or i + 1, value=arg.value)
    return out


def read_table_entries(ctx: Context, req: p4runtime_pb2.TableEntry) -> Iterator[Entity]:
    """Wildcard reads: unset/zero fields of the request select everything (spec, Wildcard Reads)."""
    if not req.table_id and (req.match or req.priority or req.HasField("action")
                             or req.controller_metadata or req.metadata):
        raise invalid("a read of all tables (table_id 0) takes no other filter")
    tables = [ctx.index.table(req.table_id)] if req.table_id else list(ctx.index.p4info.tables)
    with_counters = req.HasField("counter_data")
    with_meters = req.HasField("meter_config")
    with_idle = req.HasField("time_since_last_hit")
    if with_idle and req.table_id and not tables[0].idle_timeout_behavior:
        raise invalid(f"table {tables[0].preamble.name!r} does not support idle timeouts")
    action_id = req.action.action.action_id if req.HasField("action") else 0
    for table in tables:
        if req.is_default_action:
            if with_idle:
                raise invalid("a default entry has no idle timeout")
            yield Entity(table_entry=default_entry(ctx, table))
            continue
        if req.match:
            probe = p4runtime_pb2.TableEntry(table_id=req.table_id, priority=req.priority)
            canonical_matches(ctx.index, table, req.match, probe.match)
            hit = ctx.binding.find(table, probe)
            selected = [] if hit is None else [hit]
        else:
            selected = ctx.binding.table(table).entries()
        counters = with_counters and direct_counter_of(ctx.index, table) is not None
        meters = with_meters and direct_meter_of(ctx.index, table) is not None
        idle = with_idle and table.idle_timeout_behavior
        for found in selected:
            if (req.priority and found.priority != req.priority
                    or req.controller_metadata and found.controller_metadata != req.controller_metadata
                    or req.metadata and found.metadata != req.metadata):
                continue
            ent = Entity()
            ent.table_entry.CopyFrom(entry_of(ctx, table, found))
            if action_id and ent.table_entry.action.action.action_id != action_id:
                continue
            if counters:
                ent.table_entry.counter_data.CopyFrom(counter_data_of(found))
            if idle:
                ent.table_entry.time_since_last_hit.elapsed_ns = elapsed_since_hit(found)
            if meters:
                cfg = ctx.binding.direct_meter_config(found)
                if cfg is not None:
                    ent.table_entry.meter_config.CopyFrom(cfg)
            yield ent


# -- action profiles ---------------------------------------------------------------------------
def _profile_actions(ctx: Context, ap) -> dict[int, int]:
    allowed: dict[int, int] = {}
    for tid in ap.table_ids:
        table = ctx.index.by_id["tables"].get(tid)
        if table is not None:
            allowed.update(table_actions(table))
    return allowed


def write_member(ctx: Context, update_type: int, msg: p4runtime_pb2.ActionProfileMember) -> None:
    """Decode the member (its action against the profile's tables), then let the runtime profile, the
    one store of members, decide: ALREADY_EXISTS, RESOURCE_EXHAUSTED, NOT_FOUND, and
    FAILED_PRECONDITION for a member still in use."""
    ap = ctx.index.action_profile(msg.action_profile_id)
    name = ap.preamble.name
    member = p4runtime_pb2.ActionProfileMember(action_profile_id=msg.action_profile_id,
                                               member_id=msg.member_id)
    if update_type != U.DELETE:
        if not msg.HasField("action"):
            raise invalid("a member needs an action")
        canonical_action(ctx.index, msg.action, _profile_actions(ctx, ap),
                         owner=f"action profile {name!r}", out=member.action)
    if update_type == U.INSERT:
        oneshot.check_style(ctx, msg.action_profile_id, oneshot=False)
    ctx.binding.member_write(name, update_type, member)


def write_group(ctx: Context, update_type: int, msg: p4runtime_pb2.ActionProfileGroup) -> None:
    """Decode the group (watch ports against the device's ports), then let the runtime selector, the
    one store of groups, decide: ALREADY_EXISTS, NOT_FOUND (the group or a member), max_size and
    members (INVALID_ARGUMENT), sizes (RESOURCE_EXHAUSTED), FAILED_PRECONDITION for a group in use."""
    ap = ctx.index.action_profile(msg.action_profile_id)
    name = ap.preamble.name
    if not ap.with_selector:
        raise invalid(f"action profile {name!r} has no selector: it has no groups")
    if update_type != U.DELETE:
        for m in msg.members:
            oneshot.check_watch_port(ctx, m)
    group = p4runtime_pb2.ActionProfileGroup(action_profile_id=msg.action_profile_id, group_id=msg.group_id)
    if update_type != U.DELETE:
        group.members.extend(msg.members)
        group.max_size = msg.max_size
    ctx.binding.group_write(name, update_type, group)


def _explicit_profiles(ctx: Context, ap_id: int) -> list[int]:
    ids = [ap_id] if ap_id else list(ctx.index.by_id["action_profiles"])
    for i in ids:
        ctx.index.action_profile(i)  # NOT_FOUND for an unknown id
    # a selector programmed with one-shot sets holds only their hidden members and groups
    return [i for i in ids if not oneshot.uses_oneshot(ctx, i)]


def read_members(ctx: Context, req: p4runtime_pb2.ActionProfileMember) -> Iterator[Entity]:
    for ap_id in _explicit_profiles(ctx, req.action_profile_id):
        name = ctx.index.action_profile(ap_id).preamble.name
        for member in ctx.binding.member_protos(ap_id, name):
            if req.member_id and member.member_id != req.member_id:
                continue
            yield Entity(action_profile_member=member)


def read_groups(ctx: Context, req: p4runtime_pb2.ActionProfileGroup) -> Iterator[Entity]:
    for ap_id in _explicit_profiles(ctx, req.action_profile_id):
        name = ctx.index.action_profile(ap_id).preamble.name
        for group in ctx.binding.group_protos(ap_id, name):
            if req.group_id and group.group_id != req.group_id:
                continue
            yield Entity(action_profile_group=group)
