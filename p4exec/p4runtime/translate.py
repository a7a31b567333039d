"""Validation and canonical form of table entries and actions (protobuf side).

A write is checked completely here, before any state changes, so that a rejected
update leaves the device untouched. The canonical form (matches sorted by field id,
byte strings without leading zeros, don't-care fields omitted) is what the server
stores and returns on Read, and its match part is the entry's identity.
"""

from __future__ import annotations

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from p4exec.entry_codec import BY_P4INFO, fill, refusal
from p4exec.p4runtime.codec import decode, encode
from p4exec.p4runtime.errors import P4RuntimeError, invalid
from p4exec.p4runtime.p4info_index import P4InfoIndex

MF = p4info_pb2.MatchField
ActionRef = p4info_pb2.ActionRef


def _canonical_match(
    mf: p4info_pb2.MatchField, fm: p4runtime_pb2.FieldMatch, out: p4runtime_pb2.FieldMatch
) -> None:
    """Check one field match against its P4Info field and write its canonical form to `out` (the match
    kinds and their rules: p4exec/entry_codec.py)."""
    w = mf.bitwidth
    what = f"match field {mf.name!r}"
    given = fm.WhichOneof("field_match_type")
    kind = BY_P4INFO.get(mf.match_type)
    if given == "other" or kind is None:
        raise P4RuntimeError("UNIMPLEMENTED", f"{what}: match kind not supported")
    if given != kind.name:
        raise invalid(f"{what} is {kind.name}, the update gives {given}")
    sub = getattr(fm, kind.name)
    if kind.length_second:  # an LPM: its prefix length is judged before its value is read
        plen = getattr(sub, kind.values[1])
        why = refusal(kind, 0, plen, w, what, on_length=True)
        if why:
            raise invalid(why)
        values: tuple[int, ...] = (decode(getattr(sub, kind.values[0]), w, what), plen)
    else:
        values = tuple(decode(getattr(sub, name), w, what + label) for name, label in zip(kind.values, kind.labels, strict=True))
    why = refusal(kind, values[0], values[-1], w, what)
    if why:
        raise invalid(why)
    fill(out, mf.id, kind, values)


def canonical_matches(
    index: P4InfoIndex, table: p4info_pb2.Table, matches, target=None
) -> list[p4runtime_pb2.FieldMatch]:
    return canonical_field_list(table.preamble.name, list(table.match_fields), matches, target)


def canonical_field_list(owner: str, declared, matches, target=None):
    """Check matches against declared match fields (a table's or a value set's).

    The canonical matches (sorted by field id) are added to `target` (a repeated
    FieldMatch field) or to a fresh container, which is returned.
    """
    fields = {mf.id: mf for mf in declared}
    if target is None:
        target = p4runtime_pb2.TableEntry().match
    ordered = sorted(matches, key=lambda m: m.field_id)
    seen: set[int] = set()
    for fm in ordered:
        mf = fields.get(fm.field_id)
        if mf is None:
            raise invalid(f"{owner!r} has no match field id {fm.field_id}")
        if fm.field_id in seen:
            raise invalid(f"match field {mf.name!r} given twice")
        seen.add(fm.field_id)
        _canonical_match(mf, fm, target.add())
    for mf in declared:
        if mf.match_type == MF.EXACT and mf.id not in seen:
            raise invalid(f"exact match field {mf.name!r} is missing")
    return target


def canonical_action(
    index: P4InfoIndex, action: p4runtime_pb2.Action, allowed: dict[int, int] | None,
    *, as_default: bool = False, owner: str = "", out: p4runtime_pb2.Action | None = None,
) -> p4runtime_pb2.Action:
    """Check an action call: known, allowed in this context, every param once and in range."""
    info = index.action(action.action_id)
    name = info.preamble.name
    if allowed is not None:
        if action.action_id not in allowed:
            raise invalid(f"action {name!r} is not an action of {owner}")
        scope = allowed[action.action_id]
        if as_default and scope == ActionRef.TABLE_ONLY:
            raise P4RuntimeError("PERMISSION_DENIED",
                                 f"action {name!r} is @tableonly and cannot be the default action")
        if not as_default and scope == ActionRef.DEFAULT_ONLY:
            raise P4RuntimeError("PERMISSION_DENIED",
                                 f"action {name!r} is @defaultonly and cannot be used in an entry")
    params = index.action_params[action.action_id]
    got: dict[int, bytes] = {}
    for p in action.params:
        pinfo = params.get(p.param_id)
        if pinfo is None:
            raise invalid(f"action {name!r} has no parameter id {p.param_id}")
        if p.param_id in got:
            raise invalid(f"parameter {pinfo.name!r} of {name!r} given twice")
        got[p.param_id] = encode(decode(p.value, pinfo.bitwidth, f"parameter {pinfo.name!r}"))
    missing = [params[i].name for i in params if i not in got]
    if missing:
        raise invalid(f"action {name!r} is missing parameters {missing}")
    if out is None:
        out = p4runtime_pb2.Action()
    out.action_id = action.action_id
    for pid in sorted(got):
        out.params.add(param_id=pid, value=got[pid])
    return out


def table_actions(table: p4info_pb2.Table) -> dict[int, int]:
    return {ref.id: ref.scope for ref in table.action_refs}


def canonical_table_entry(
    index: P4InfoIndex, entry: p4runtime_pb2.TableEntry, update_type: int
) -> p4runtime_pb2.TableEntry:
    """The canonical form of a table entry of a Write, or an error saying why not.

    A MODIFY without an action keeps the entry's action (only direct resources change);
    the caller fills the stored action in.
    """
    table = index.table(entry.table_id)
    tname = table.preamble.name
    out = p4runtime_pb2.TableEntry(table_id=entry.table_id)
    if entry.is_const:
        raise invalid("is_const must be false in a write")
    if entry.HasField("time_since_last_hit"):
        raise invalid("time_since_last_hit must be unset in a write")
    if entry.is_default_action:
        if update_type != p4runtime_pb2.Update.MODIFY:
            raise invalid(f"the default entry of {tname!r} can only be modified")
        if entry.match or entry.priority:
            raise invalid("a default entry has no match fields and no priority")
        if entry.idle_timeout_ns:
            raise invalid("a default entry has no idle timeout")
        if table.const_default_action_id:
            raise P4RuntimeError("PERMISSION_DENIED", f"the default action of {tname!r} is const")
        out.is_default_action = True
        if entry.HasField("action"):
            if entry.action.WhichOneof("type") != "action":
                raise invalid("a default entry takes a direct action")
            canonical_action(index, entry.action.action, table_actions(table),
                             as_default=True, owner=f"table {tname!r}", out=out.action.action)
        return out
    if not table.match_fields and update_type == p4runtime_pb2.Update.INSERT:
        raise invalid(f"table {tname!r} has no key: only its default entry can be written")
    modify_in_place = update_type == p4runtime_pb2.Update.MODIFY and not entry.HasField("action")
    if table.is_const_table and not modify_in_place:
        raise P4RuntimeError("PERMISSION_DENIED",
                             f"table {tname!r} has const entries: only direct resources can change")
    canonical_matches(index, table, entry.match, out.match)
    needs_priority = index.table_needs_priority(table)
    if needs_priority and not 0 < entry.priority < 1 << 31:
        raise invalid(f"table {tname!r} needs a priority in 1..2^31-1 (ternary/range/optional fields)")
    if not needs_priority and entry.priority != 0:
        raise invalid(f"table {tname!r} has no ternary/range/optional fields: priority must be 0")
    out.priority = entry.priority
    if update_type == p4runtime_pb2.Update.DELETE:
        return out
    if entry.idle_timeout_ns and table.idle_timeout_behavior == p4info_pb2.Table.NO_TIMEOUT:
        raise invalid(f"table {tname!r} does not support idle timeouts")
    out.idle_timeout_ns = entry.idle_timeout_ns
    out.controller_metadata = entry.controller_metadata
    out.metadata = entry.metadata
    if entry.HasField("action"):
        _check_table_action(index, table, entry.action, out.action)
    elif update_type == p4runtime_pb2.Update.INSERT:
        raise invalid(f"an entry of {tname!r} needs an action")
    if entry.HasField("counter_data"):
        if not _direct_resource(index, table, "direct_counters"):
            raise invalid(f"table {tname!r} has no direct counter")
        out.counter_data.CopyFrom(entry.counter_data)
    if entry.HasField("meter_config"):
        if not _direct_resource(index, table, "direct_meters"):
            raise invalid(f"table {tname!r} has no direct meter")
        out.meter_config.CopyFrom(entry.meter_config)
    return out


def _check_table_action(index, table, action, out) -> None:
    tname = table.preamble.name
    kind = action.WhichOneof("type")
    profile = index.table_profile(table)
    if kind == "action":
        if profile is not None:
            raise invalid(f"table {tname!r} uses action profile {profile.preamble.name!r}: "
                          "give a member or group id")
        canonical_action(index, action.action, table_actions(table),
                         owner=f"table {tname!r}", out=out.action)
    elif kind in ("action_profile_member_id", "action_profile_group_id"):
        if profile is None:
            raise invalid(f"table {tname!r} has no action profile: give a direct action")
        if kind == "action_profile_group_id" and not profile.with_selector:
            raise invalid(f"action profile {profile.preamble.name!r} has no selector: no groups")
        setattr(out, kind, getattr(action, kind))
    elif kind == "action_profile_action_set":
        if profile is None or not profile.with_selector:
            raise invalid(f"table {tname!r} has no action selector: no one-shot action sets")
        _check_action_set(index, table, profile, action.action_profile_action_set,
                          out.action_profile_action_set)
    else:
        raise invalid(f"an entry of {tname!r} needs an action")


def _check_action_set(index, table, profile, action_set, out) -> None:
    """One-shot selector programming: actions of the table, positive weights, group size."""
    tname = table.preamble.name
    if not action_set.action_profile_actions:
        raise invalid("a one-shot action set needs at least one action")
    total = 0
    for a in action_set.action_profile_actions:
        if a.weight <= 0:
            raise invalid("one-shot action weights must be positive")
        dst = out.action_profile_actions.add(weight=a.weight)
        canonical_action(index, a.action, table_actions(table), owner=f"table {tname!r}",
                         out=dst.action)
        kind = a.WhichOneof("watch_kind")
        if kind == "watch_port":
            dst.watch_port = a.watch_port
        elif kind == "watch":
            dst.watch = a.watch
        total += a.weight
    members = len(action_set.action_profile_actions)
    by_members = profile.WhichOneof("selector_size_semantics") == "sum_of_members"
    size = members if by_members else total
    if profile.max_group_size and size > profile.max_group_size:
        raise invalid(f"one-shot group size {size} exceeds max_group_size {profile.max_group_size}")


def _direct_resource(index: P4InfoIndex, table, section: str):
    for rid in table.direct_resource_ids:
        obj = index.by_id[section].get(rid)
        if obj is not None:
            return obj
    return None


def direct_counter_of(index: P4InfoIndex, table):
    return _direct_resource(index, table, "direct_counters")


def direct_meter_of(index: P4InfoIndex, table):
    return _direct_resource(index, table, "direct_meters")
