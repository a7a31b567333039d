"""Write and Read of table entries and action profile members/groups.

A table entry is decoded and validated once (translate.py) and handed to the runtime table, which
keeps it and is the only judge of existence, size, const-ness and references: it raises before it
changes anything, so a failure leaves the device as it was. Read encodes the runtime's entries.
Members and groups are still checked and recorded here (store.py) before they reach the runtime.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TypeAlias

from p4.v1 import p4runtime_pb2

from p4exec.p4runtime import oneshot
from p4exec.p4runtime.context import Context
from p4exec.p4runtime.errors import P4RuntimeError, invalid, not_found
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
    ap = ctx.index.action_profile(msg.action_profile_id)
    members = ctx.store.members.setdefault(msg.action_profile_id, {})
    name = ap.preamble.name
    stored = p4runtime_pb2.ActionProfileMember(action_profile_id=msg.action_profile_id,
                                               member_id=msg.member_id)
    if update_type != U.DELETE:
        if not msg.HasField("action"):
            raise invalid("a member needs an action")
        canonical_action(ctx.index, msg.action, _profile_actions(ctx, ap),
                         owner=f"action profile {name!r}", out=stored.action)
    if update_type == U.INSERT:
        oneshot.check_style(ctx, msg.action_profile_id, oneshot=False)
        if msg.member_id in members:
            raise P4RuntimeError("ALREADY_EXISTS", f"member {msg.member_id} exists in {name!r}")
        if ap.size and len(members) >= ap.size:
            raise P4RuntimeError("RESOURCE_EXHAUSTED", f"action profile {name!r} is full")
    elif msg.member_id not in members:
        raise not_found(f"no member {msg.member_id} in {name!r}")
    # a member still used by a group or entry: the runtime's FAILED_PRECONDITION
    ctx.binding.member_write(name, update_type, stored)
    if update_type == U.DELETE:
        del members[msg.member_id]
    else:
        members[msg.member_id] = stored


def write_group(ctx: Context, update_type: int, msg: p4runtime_pb2.ActionProfileGroup) -> None:
    ap = ctx.index.action_profile(msg.action_profile_id)
    name = ap.preamble.name
    if not ap.with_selector:
        raise invalid(f"action profile {name!r} has no selector: it has no groups")
    groups = ctx.store.groups.setdefault(msg.action_profile_id, {})
    stored = p4runtime_pb2.ActionProfileGroup(action_profile_id=msg.action_profile_id,
                                              group_id=msg.group_id)
    if update_type == U.INSERT:
        if msg.group_id in groups:
            raise P4RuntimeError("ALREADY_EXISTS", f"group {msg.group_id} exists in {name!r}")
    elif msg.group_id not in groups:
        raise not_found(f"no group {msg.group_id} in {name!r}")
    if update_type == U.DELETE:
        # a group still used by an entry: the runtime's FAILED_PRECONDITION
        ctx.binding.group_write(name, update_type, stored)
        del groups[msg.group_id]
        return
    max_size = msg.max_size
    if ap.max_group_size and max_size > ap.max_group_size:
        raise invalid(f"max_size {max_size} exceeds the profile's max_group_size {ap.max_group_size}")
    if update_type == U.MODIFY and max_size != groups[msg.group_id].max_size:
        raise invalid("max_size of a group cannot change")
    members = ctx.store.members.get(msg.action_profile_id, {})
    seen = set()
    total = 0
    for m in msg.members:
        if m.member_id not in members:
            raise not_found(f"no member {m.member_id} in {name!r}")
        if m.member_id in seen:
            raise invalid(f"member {m.member_id} listed twice")
        if m.weight <= 0:
            raise invalid(f"member {m.member_id}: weight must be positive")
        oneshot.check_watch_port(ctx, m)
        seen.add(m.member_id)
        total += m.weight
        stored.members.add().CopyFrom(m)
    # Group size counts weights unless the P4Info says members; the profile's total size
    # (all groups together) is the runtime's check.
    used = len(seen) if ap.WhichOneof("selector_size_semantics") == "sum_of_members" else total
    limit = max_size or ap.max_group_size
    if limit and used > limit:
        raise P4RuntimeError("RESOURCE_EXHAUSTED",
                             f"group size {used} is more than its maximum {limit}")
    stored.max_size = max_size
    ctx.binding.group_write(name, update_type, stored)
    groups[msg.group_id] = stored


def read_members(ctx: Context, req: p4runtime_pb2.ActionProfileMember) -> Iterator[Entity]:
    ids = [req.action_profile_id] if req.action_profile_id else list(ctx.index.by_id["action_profiles"])
    for ap_id in ids:
        ctx.index.action_profile(ap_id)
        for mid, member in ctx.store.members.get(ap_id, {}).items():
            if req.member_id and mid != req.member_id:
                continue
            yield Entity(action_profile_member=member)


def read_groups(ctx: Context, req: p4runtime_pb2.ActionProfileGroup) -> Iterator[Entity]:
    ids = [req.action_profile_id] if req.action_profile_id else list(ctx.index.by_id["action_profiles"])
    for ap_id in ids:
        ctx.index.action_profile(ap_id)
        for gid, group in ctx.store.groups.get(ap_id, {}).items():
            if req.group_id and gid != req.group_id:
                continue
            yield Entity(action_profile_group=group)
