"""Fast path of table writes: a simple entry read from the wire goes straight into the runtime table.

"Simple": a table with match fields, no action profile, no direct counter/meter, not const, and an
entry with a direct action (what fabrics write by the ten thousand). Per table the key layout and
the actions are prepared once. The fast path only *accepts*: anything it would reject or does not
know returns False before any state changes, and the general path (translate.py, entities.py) then
handles the update and gives the error — so both paths answer alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from p4exec.p4runtime.store import EntryMap
from p4exec.p4runtime.wire import SimpleEntry
from p4exec.runtime import ActionCall, Exact, Lpm, Optional_, Range, RuntimeOpError, Ternary
from p4exec.runtime import TableEntry as RuntimeEntry

U = p4runtime_pb2.Update
MF = p4info_pb2.MatchField
ActionRef = p4info_pb2.ActionRef
_KIND_OF = {MF.EXACT: "exact", MF.LPM: "lpm", MF.TERNARY: "ternary", MF.RANGE: "range", MF.OPTIONAL: "optional"}


@dataclass
class ActionLayout:
    name: str
    params: dict[int, int]  # param id -> bitwidth
    order: tuple[int, ...]  # param ids in P4Info order (the runtime's argument order)
    sorted_ids: tuple[int, ...]  # param ids in ascending order (the canonical order of a Read)


@dataclass
class TableLayout:
    table_id: int
    size: int
    fields: dict[int, tuple[int, str, int]]  # field id -> (position, kind, bitwidth)
    nfields: int
    nexact: int  # exact fields: every one must be given
    needs_priority: bool
    idle_ok: bool
    actions: dict[int, ActionLayout]  # actions allowed in entries
    runtime: Any  # p4exec.runtime.Table
    entries: EntryMap


def layout(ctx, table_id: int) -> TableLayout | None:
    """The table's layout (cached on the context), or None if the table is not for the fast path."""
    cache = ctx.fast_layouts
    if table_id in cache:
        return cache[table_id]
    cache[table_id] = lay = _build(ctx, table_id)
    return lay


def _build(ctx, table_id: int) -> TableLayout | None:
    table = ctx.index.by_id["tables"].get(table_id)
    if table is None or not table.match_fields or table.implementation_id or table.is_const_table:
        return None
    if table.direct_resource_ids:
        return None
    runtime = ctx.binding._obj("tables", table.preamble.name)
    if runtime is None:
        return None
    fields: dict[int, tuple[int, str, int]] = {}
    for pos, mf in enumerate(table.match_fields):
        kind = _KIND_OF.get(mf.match_type)
        if kind is None or mf.bitwidth <= 0:
            return None
        fields[mf.id] = (pos, kind, mf.bitwidth)
    if [f.name for f in runtime.fields] != [mf.name for mf in table.match_fields]:
        return None
    actions: dict[int, ActionLayout] = {}
    for ref in table.action_refs:
        if ref.scope == ActionRef.DEFAULT_ONLY:
            continue
        info = ctx.index.by_id["actions"].get(ref.id)
        if info is None:
            continue
        actions[ref.id] = ActionLayout(info.preamble.name, {p.id: p.bitwidth for p in info.params},
                                       tuple(p.id for p in info.params), tuple(sorted(p.id for p in info.params)))
    return TableLayout(
        table_id, table.size, fields, len(table.match_fields),
        sum(1 for mf in table.match_fields if mf.match_type == MF.EXACT),
        ctx.index.table_needs_priority(table),
        table.idle_timeout_behavior != p4info_pb2.Table.NO_TIMEOUT,
        actions, runtime, ctx.store.table(table_id))


def _canon(data: bytes, width: int) -> tuple[int, bytes] | None:
    """(value, canonical bytes) if `data` is a valid value of `width` bits."""
    if not data:
        return None
    value = int.from_bytes(data, "big")
    if value >> width:
        return None
    if data[0] or len(data) == 1:
        return value, data  # already canonical (no leading zero byte): no new bytes object
    return value, value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


def apply(ctx, utype: int, e: SimpleEntry) -> bool:
    """Apply a simple entry; False (nothing changed) if the general path must judge it."""
    if utype != U.INSERT and utype != U.MODIFY and utype != U.DELETE:
        return False
    lay = ctx.fast_layouts.get(e.table_id, _UNSET)
    if lay is _UNSET:
        lay = layout(ctx, e.table_id)
    if lay is None:
        return False
    fields = lay.fields
    runtime_match: list = [None] * lay.nfields
    key_parts: list[tuple] = []
    canon: list[tuple[int, str, bytes, bytes | int | None]] = []
    matches = e.matches
    if len(matches) > 1:
        matches = sorted(matches, key=_first)
    last = -1
    nexact = 0
    for fid, kind, a, b in matches:
        spec = fields.get(fid)
        if spec is None or fid == last:  # sorted: a repeated field id is next to itself
            return False
        last = fid
        pos, fkind, width = spec
        if kind != fkind or not a:
            return False
        va = int.from_bytes(a, "big")
        if va >> width:
            return False
        if not a[0] and len(a) > 1:
            a = va.to_bytes(max(1, (va.bit_length() + 7) // 8), "big")
        if kind == "exact":
            nexact += 1
            runtime_match[pos] = Exact(va)
            canon.append((fid, kind, a, None))
            key_parts.append((fid, a))
        elif kind == "lpm":
            plen = b
            if not isinstance(plen, int) or not 0 < plen <= width:
                return False
            if va & ~(((1 << plen) - 1) << (width - plen)):
                return False
            runtime_match[pos] = Lpm(va, plen)
            canon.append((fid, kind, a, plen))
            key_parts.append((fid, a, plen))
        elif kind == "optional":
            runtime_match[pos] = Optional_(va)
            canon.append((fid, kind, a, None))
            key_parts.append((fid, a, 0, 0, 0))
        else:
            vb = _canon(b, width)  # type: ignore[arg-type]
            if vb is None:
                return False
            if kind == "ternary":
                if vb[0] == 0 or va & ~vb[0]:
                    return False
                runtime_match[pos] = Ternary(va, vb[0])
                key_parts.append((fid, a, vb[1]))
            else:
                if va > vb[0] or (va == 0 and vb[0] == (1 << width) - 1):
                    return False
                runtime_match[pos] = Range(va, vb[0])
                key_parts.append((fid, a, vb[1], 0))
            canon.append((fid, kind, a, vb[1]))
    if nexact != lay.nexact:
        return False
    priority = e.priority
    if lay.needs_priority:
        if not 0 < priority < 1 << 31:
            return False
    elif priority:
        return False
    key = (tuple(key_parts), priority)
    entries = lay.entries
    if utype == U.DELETE:
        if key not in entries:
            return False
        old = entries.raw(key)
        if isinstance(old, p4runtime_pb2.TableEntry) and old.is_const:
            return False
        try:
            lay.runtime.delete(RuntimeEntry(tuple(runtime_match), priority))
        except RuntimeOpError:
            return False  # the runtime checks before it changes anything
        del entries[key]
        return True
    if e.idle_timeout_ns and not lay.idle_ok:
        return False
    act = lay.actions.get(e.action_id)
    if act is None:
        return False
    pwidths = act.params
    if len(e.params) != len(pwidths):
        return False
    got: dict[int, tuple[int, bytes]] = {}
    for pid, value in e.params:  # _canon inlined: two values per entry, the hottest loop here
        pwidth = pwidths.get(pid)
        if pwidth is None or pid in got or not value:
            return False
        pv = int.from_bytes(value, "big")
        if pv >> pwidth:
            return False
        if not value[0] and len(value) > 1:
            value = pv.to_bytes(max(1, (pv.bit_length() + 7) // 8), "big")
        got[pid] = (pv, value)
    if utype == U.INSERT:
        if key in entries or (lay.size and len(entries) >= lay.size):
            return False
    else:
        if key not in entries:
            return False
        old = entries.raw(key)
        if isinstance(old, p4runtime_pb2.TableEntry) and old.is_const:
            return False
    call = ActionCall(act.name, tuple([got[pid][0] for pid in act.order]))
    rentry = RuntimeEntry(tuple(runtime_match), priority, call, None, None, e.idle_timeout_ns, e.metadata)
    try:
        if utype == U.INSERT:
            lay.runtime.insert(rentry, trusted=True)
        else:
            lay.runtime.modify(rentry, trusted=True)
    except RuntimeOpError:
        return False
    # kept as parts: serialized and parsed only if someone reads the entry (EntryMap)
    entries[key] = (e.table_id, canon, priority, e.controller_metadata, e.idle_timeout_ns,
                    e.metadata, e.action_id, [(pid, got[pid][1]) for pid in act.sorted_ids])
    return True


_UNSET = object()


def _first(m: tuple) -> int:
    return m[0]
