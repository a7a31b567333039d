"""Write and Read of table entries and action profile members/groups.

Each write is validated in full (translate.py), checked against the store
(existence, references, sizes), mirrored into the runtime, and only then
recorded, so any failure leaves the device as it was.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TypeAlias

from p4.v1 import p4runtime_pb2

from p4exec.p4runtime import oneshot
from p4exec.p4runtime.context import Context
from p4exec.p4runtime.errors import P4RuntimeError, invalid, not_found
from p4exec.p4runtime.idle import elapsed_since_hit
from p4exec.p4runtime.translate import (
    canonical_action,
    canonical_matches,
    canonical_table_entry,
    direct_counter_of,
    direct_meter_of,
    entry_key,
    table_actions,
)

U = p4runtime_pb2.Update
Entity: TypeAlias = p4runtime_pb2.Entity


# -- table entries -----------------------------------------------------------------------------
def write_table_entry(ctx: Context, update_type: int, msg: p4runtime_pb2.TableEntry) -> None:
    entry = canonical_table_entry(ctx.index, msg, update_type)
    table = ctx.index.table(entry.table_id)
    if entry.is_default_action:
        action = entry.action.action if entry.HasField("action") else None
        ctx.binding.table_default(table, action)
        if action is None:
            ctx.store.defaults.pop(entry.table_id, None)
        else:
            ctx.store.defaults[entry.table_id] = action
        return
    entries = ctx.store.table(entry.table_id)
    key = entry_key(entry)
    name = table.preamble.name
    if update_type == U.INSERT:
        if key in entries:
            raise P4RuntimeError("ALREADY_EXISTS", f"entry already in table {name!r}")
        if table.size and len(entries) >= table.size:
            raise P4RuntimeError("RESOURCE_EXHAUSTED", f"table {name!r} is full ({table.size})")
    elif key not in entries:
        raise not_found(f"no such entry in table {name!r}")
    old = entries.get(key)
    in_place = update_type == U.MODIFY and not entry.HasField("action")
    if old is not None and old.is_const and not in_place:
        raise P4RuntimeError("PERMISSION_DENIED", "a const entry: only direct resources can change")
    if in_place:  # action (and the rest of the entry) unchanged: only direct resources
        kept = p4runtime_pb2.TableEntry()
        kept.CopyFrom(old)
        if entry.HasField("counter_data"):
            kept.counter_data.CopyFrom(entry.counter_data)
        if entry.HasField("meter_config"):
            kept.meter_config.CopyFrom(entry.meter_config)
        entry = kept
    else:
        if update_type != U.DELETE:
            _check_profile_refs(ctx, table, entry)
        _write_through(ctx, table, update_type, entry, key)
    if update_type == U.DELETE:
        del entries[key]
        _forget_direct(ctx, entry.table_id, key)
        return
    counter = entry.counter_data if entry.HasField("counter_data") else None
    meter = entry.meter_config if entry.HasField("meter_config") else None
    if update_type == U.INSERT:
        _forget_direct(ctx, entry.table_id, key)
    if counter is not None:
        _set_direct_counter(ctx, table, entry, key, counter)
    if meter is not None:
        ctx.binding.direct_meter_set(table, entry, meter)
        ctx.store.direct_meters[entry.table_id, key] = meter
    elif update_type == U.MODIFY and direct_meter_of(ctx.index, table) is not None:
        ctx.binding.direct_meter_set(table, entry, None)  # unset on MODIFY: back to all-green
        ctx.store.direct_meters.pop((entry.table_id, key), None)
    entry.ClearField("counter_data")  # the entry is our own canonical copy: store it as is
    entry.ClearField("meter_config")
    entries[key] = entry


def _write_through(ctx: Context, table, update_type: int, entry, key) -> None:
    """Apply the entry to the runtime table, realizing one-shot action sets as hidden groups."""
    old = ctx.store.oneshots.get((entry.table_id, key))
    if entry.action.WhichOneof("type") != "action_profile_action_set":
        ctx.binding.table_write(table, update_type, entry)
        if old is not None:
            del ctx.store.oneshots[entry.table_id, key]
            oneshot.release(ctx, old)
        return
    pointing, made = oneshot.realize(ctx, table, entry)
    try:
        ctx.binding.table_write(table, update_type, pointing)
    except Exception:
        oneshot.release(ctx, made)
        raise
    ctx.store.oneshots[entry.table_id, key] = made
    if old is not None:
        oneshot.release(ctx, old)


def _forget_direct(ctx: Context, table_id: int, key) -> None:
    ctx.store.direct_counters.pop((table_id, key), None)
    ctx.store.direct_meters.pop((table_id, key), None)


def _set_direct_counter(ctx, table, entry, key, data: p4runtime_pb2.CounterData) -> None:
    if not ctx.binding.set_direct_counter(table, entry, data.byte_count, data.packet_count):
        ctx.store.direct_counters[entry.table_id, key] = (data.byte_count, data.packet_count)


def _check_profile_refs(ctx: Context, table, entry: p4runtime_pb2.TableEntry) -> None:
    kind = entry.action.WhichOneof("type")
    ap_id = table.implementation_id
    if ap_id:
        oneshot.check_style(ctx, ap_id, kind == "action_profile_action_set")
    if kind == "action_profile_member_id":
        if entry.action.action_profile_member_id not in ctx.store.members.get(ap_id, {}):
            raise not_found(f"no member {entry.action.action_profile_member_id} in the profile")
    elif kind == "action_profile_group_id":
        if entry.action.action_profile_group_id not in ctx.store.groups.get(ap_id, {}):
            raise not_found(f"no group {entry.action.action_profile_group_id} in the profile")


def counter_data_of(ctx: Context, table, entry: p4runtime_pb2.TableEntry, key) -> p4runtime_pb2.CounterData:
    live = ctx.binding.direct_counter(table, entry)
    if live is None:
        live = ctx.store.direct_counters.get((entry.table_id, key), (0, 0))
    return p4runtime_pb2.CounterData(byte_count=live[0], packet_count=live[1])


def default_entry(ctx: Context, table) -> p4runtime_pb2.TableEntry:
    out = p4runtime_pb2.TableEntry(table_id=table.preamble.id, is_default_action=True)
    action = ctx.store.defaults.get(table.preamble.id) or ctx.binding.current_default(table)
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
        entries = ctx.store.table(table.preamble.id)
        if req.match:
            probe = p4runtime_pb2.TableEntry(table_id=req.table_id, priority=req.priority)
            canonical_matches(ctx.index, table, req.match, probe.match)
            key = entry_key(probe)
            selected = [(key, entries[key])] if key in entries else []
        else:
            selected = list(entries.items())
        for key, stored in selected:
            if (req.priority and stored.priority != req.priority
                    or action_id and stored.action.action.action_id != action_id
                    or req.controller_metadata and stored.controller_metadata != req.controller_metadata
                    or req.metadata and stored.metadata != req.metadata):
                continue
            ent = Entity()
            ent.table_entry.CopyFrom(stored)
            if with_counters and direct_counter_of(ctx.index, table) is not None:
                ent.table_entry.counter_data.CopyFrom(counter_data_of(ctx, table, stored, key))
            if with_idle and table.idle_timeout_behavior:
                ent.table_entry.time_since_last_hit.elapsed_ns = elapsed_since_hit(ctx, table, stored)
            if with_meters and direct_meter_of(ctx.index, table) is not None:
                cfg = ctx.store.direct_meters.get((table.preamble.id, key))
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
    if update_type == U.DELETE and ctx.store.member_users(msg.action_profile_id, msg.member_id):
        raise P4RuntimeError("FAILED_PRECONDITION",
                             f"member {msg.member_id} is still used by a group or table entry")
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
        if ctx.store.group_users(msg.action_profile_id, msg.group_id):
            raise P4RuntimeError("FAILED_PRECONDITION",
                                 f"group {msg.group_id} is still used by a table entry")
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
