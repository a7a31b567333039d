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
    runtime: Any  # p4exec.runtime.Table: the one store of the table's entries


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
                                       tuple(p.id for p in info.params))
    return TableLayout(
        table_id, table.size, fields, len(table.match_fields),
        sum(1 for mf in table.match_fields if mf.match_type == MF.EXACT),
        ctx.index.table_needs_priority(table),
        table.idle_timeout_behavior != p4info_pb2.Table.NO_TIMEOUT,
        actions, runtime)


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
        if kind == "exact":
            nexact += 1
            runtime_match[pos] = Exact(va)
        elif kind == "lpm":
            plen = b
            if not isinstance(plen, int) or not 0 < plen <= width:
                return False
            if va & ~(((1 << plen) - 1) << (width - plen)):
                return False
            runtime_match[pos] = Lpm(va, plen)
        elif kind == "optional":
            runtime_match[pos] = Optional_(va)
        else:
            if not b:
                return False
            vb = int.from_bytes(b, "big")  # type: ignore[arg-type]
            if vb >> width:
                return False
            if kind == "ternary":
                if vb == 0 or va & ~vb:
                    return False
                runtime_match[pos] = Ternary(va, vb)
            else:
                if va > vb or (va == 0 and vb == (1 << width) - 1):
                    return False
                runtime_match[pos] = Range(va, vb)
    if nexact != lay.nexact:
        return False
    priority = e.priority
    if lay.needs_priority:
        if not 0 < priority < 1 << 31:
            return False
    elif priority:
        return False
    rtable = lay.runtime
    if utype == U.DELETE:
        try:
            rtable.delete(RuntimeEntry(tuple(runtime_match), priority))
        except RuntimeOpError:
            return False  # the runtime checks before it changes anything
        return True
    if e.idle_timeout_ns and not lay.idle_ok:
        return False
    act = lay.actions.get(e.action_id)
    if act is None:
        return False
    pwidths = act.params
    if len(e.params) != len(pwidths):
        return False
    got: dict[int, int] = {}
    for pid, value in e.params:  # the hottest loop here: two values per entry
        pwidth = pwidths.get(pid)
        if pwidth is None or pid in got or not value:
            return False
        pv = int.from_bytes(value, "big")
        if pv >> pwidth:
            return False
        got[pid] = pv
    call = ActionCall(act.name, tuple([got[pid] for pid in act.order]))
    rentry = RuntimeEntry(tuple(runtime_match), priority, call, None, None, e.idle_timeout_ns, e.metadata,
                          controller_metadata=e.controller_metadata)
    try:
        if utype == U.INSERT:
            rtable.insert(rentry, trusted=True)
        else:
            rtable.modify(rentry, trusted=True)
    except RuntimeOpError:
        return False  # ALREADY_EXISTS, NOT_FOUND, full, const: the general path gives the error
    return True


_UNSET = object()


def _first(m: tuple) -> int:
    return m[0]
