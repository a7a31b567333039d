"""Fast path of table writes: a simple entry read from the wire goes straight into the runtime table.

"Simple": a table with match fields, no action profile, no direct counter/meter, not const, and an
entry with a direct action (what fabrics write by the ten thousand). Per table the key layout and
the actions are prepared once. The fast path only *accepts*: anything it would reject or does not
know returns False before any state changes, and the general path (translate.py, entities.py) then
handles the update and gives the error — so both paths answer alike.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from p4exec import runtime
from p4exec.entry_codec import BY_P4INFO, KINDS, refusal, refused_code
from p4exec.p4runtime.wire import Leaves, Template, Unusual, read_update
from p4exec.runtime import ActionCall, RuntimeOpError
from p4exec.runtime import TableEntry as RuntimeEntry

U = p4runtime_pb2.Update
MF = p4info_pb2.MatchField
ActionRef = p4info_pb2.ActionRef


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
        kind = BY_P4INFO.get(mf.match_type)
        if kind is None or mf.bitwidth <= 0:
            return None
        fields[mf.id] = (pos, kind.name, mf.bitwidth)
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


FastItem = tuple[int, Any, RuntimeEntry]  # (update type, runtime table, the decoded entry)
Reader = Callable[[bytes, int], Any]  # (buffer, update start) -> FastItem, None (general path) or MISS
MISS = object()  # a reader's answer for an update of another shape (its fixed bytes differ)
SHAPES_PER_LENGTH = 8  # readers kept per update length (tables, prefix lengths, update types)


def reader(ctx, tmpl: Template) -> Reader:
    """A function reading updates shaped as `tmpl` into runtime entries, generated once per shape.

    Everything in the template's fixed bytes (table, field ids and kinds, prefix lengths, priority,
    action and parameter ids, idle timeout) is checked here, once; the generated code compares the
    fixed bytes, slices the values and checks only them (widths, bits outside a prefix or mask,
    ranges). An update it refuses gives None, and the general path gives the error."""
    checks = " or ".join(f"buf[s + {a}:s + {b}] != {fixed!r}" for a, b, fixed in tmpl.fixed) or "False"
    lines = ["def read(buf, s):", f"    if {checks}:", "        return MISS"]
    body = _body(ctx, tmpl)
    lines += ["    return None"] if body is None else body
    scope: dict[str, Any] = {"MISS": MISS, "from_bytes": int.from_bytes, "ActionCall": ActionCall, "Entry": RuntimeEntry,
                             **{k.runtime: getattr(runtime, k.runtime) for k in KINDS.values()}}
    lay = ctx.fast_layouts.get(tmpl.entry.table_id)
    scope["TABLE"] = lay.runtime if lay is not None else None
    scope["ACTION"] = lay.actions[tmpl.entry.action_id].name if body is not None and tmpl.utype != U.DELETE \
        else None
    exec(compile("\n".join(lines), f"<fast path reader of table {tmpl.entry.table_id}>", "exec"), scope)  # noqa: S102 - our own text: numbers, repr() of bytes
    return scope["read"]  # type: ignore[no-any-return]


def _body(ctx, tmpl: Template) -> list[str] | None:
    """The generated lines after the fixed-bytes check, or None if no update of this shape is for the
    fast path (those lines would only return None)."""
    utype, e = tmpl.utype, tmpl.entry
    if utype != U.INSERT and utype != U.MODIFY and utype != U.DELETE:
        return None
    lay = ctx.fast_layouts.get(e.table_id, _UNSET)
    if lay is _UNSET:
        lay = layout(ctx, e.table_id)
    if lay is None:
        return None

    def value(idx: int) -> str | None:  # the slice of a value, None if absent or empty
        if idx < 0 or tmpl.spans[idx][0] == tmpl.spans[idx][1]:
            return None
        a, b = tmpl.spans[idx]
        return f"from_bytes(buf[s + {a}:s + {b}], 'big')"

    lines: list[str] = []
    match: list[str] = ["None"] * lay.nfields
    seen: set[int] = set()
    nexact = 0
    for n, (fid, kind_name, ai, bi, b) in enumerate(tmpl.matches):
        spec = lay.fields.get(fid)
        if spec is None or fid in seen:
            return None
        seen.add(fid)
        pos, fkind, width = spec
        va = value(ai)
        if kind_name != fkind or va is None:
            return None
        kind = KINDS[kind_name]  # its values and rules: p4exec/entry_codec.py, as the general path's
        nexact += kind_name == "exact"
        lines.append(f"    a{n} = {va}")
        if kind.length_second:  # the prefix length is a fixed byte of the shape: judged here, once
            if not isinstance(b, int) or refusal(kind, 0, b, width, "", on_length=True):
                return None
            second, wide = str(b), f"a{n} >> {width}"
        elif kind.arity == 2:
            vb = value(bi)
            if vb is None:
                return None
            lines.append(f"    b{n} = {vb}")
            second, wide = f"b{n}", f"a{n} >> {width} or b{n} >> {width}"
        else:
            second, wide = "", f"a{n} >> {width}"
        rules = refused_code(kind, f"a{n}", second, width) if kind.rules else ""
        lines += [f"    if {wide}{' or ' + rules if rules else ''}:", "        return None"]
        match[pos] = f"{kind.runtime}(a{n}{', ' + second if second else ''})"
    if nexact != lay.nexact:
        return None
    if lay.needs_priority:
        if not 0 < e.priority < 1 << 31:
            return None
    elif e.priority:
        return None
    key = f"({', '.join(match)},), {e.priority}"
    if utype == U.DELETE:
        return [*lines, f"    return {utype}, TABLE, Entry({key})"]
    if e.idle_timeout_ns and not lay.idle_ok:
        return None
    act = lay.actions.get(e.action_id)
    if act is None or len(tmpl.params) != len(act.params):
        return None
    where: dict[int, int] = {}
    for pid, idx in tmpl.params:
        if pid not in act.params or pid in where:
            return None
        where[pid] = idx
    args = []
    for k, pid in enumerate(act.order):
        pv = value(where[pid])
        if pv is None:
            return None
        lines += [f"    p{k} = {pv}", f"    if p{k} >> {act.params[pid]}:", "        return None"]
        args.append(f"p{k}")
    meta = "b''" if tmpl.meta < 0 else f"buf[s + {tmpl.spans[tmpl.meta][0]}:s + {tmpl.spans[tmpl.meta][1]}]"
    call = f"ActionCall(ACTION, ({''.join(a + ', ' for a in args)}))"
    return [*lines, f"    return {utype}, TABLE, Entry({key}, {call}, None, None, {e.idle_timeout_ns}, {meta}, "
                    f"controller_metadata={e.controller_metadata})"]


def decode(ctx, buf: bytes, spans: list[tuple[int, int]]) -> list[FastItem | None]:
    """Each update of a Write as a runtime entry for the fast path, or None (the general path's).

    An update of a shape seen before (same length and fixed bytes; kept per pipeline) is read by that
    shape's generated reader; others are scanned by `wire` first and give a new reader."""
    out: list[FastItem | None] = []
    append = out.append
    known = ctx.fast_readers
    for start, end in spans:
        readers = known.get(end - start)
        if readers is None:
            readers = known[end - start] = []
        for read in readers:
            item = read(buf, start)
            if item is not MISS:
                append(item)
                break
        else:
            leaves: Leaves = []
            try:
                utype, simple = read_update(buf, start, end, leaves)
            except (Unusual, IndexError):
                simple = None
            if simple is None:
                append(None)
                continue
            read = reader(ctx, Template(buf, start, end, utype, simple, leaves))
            if len(readers) < SHAPES_PER_LENGTH:
                readers.append(read)
            append(read(buf, start))
    return out


def commit(item: FastItem) -> bool:
    """Apply a decoded entry; False (nothing changed) if the general path must judge it."""
    utype, table, entry = item
    try:
        if utype == U.INSERT:
            table.insert(entry, trusted=True)
        elif utype == U.MODIFY:
            table.modify(entry, trusted=True)
        else:
            table.delete(entry)
    except RuntimeOpError:
        return False  # ALREADY_EXISTS, NOT_FOUND, full, const: the general path gives the error
    return True


_UNSET = object()

