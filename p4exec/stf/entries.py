"""STF names and ``add``/``setdefault`` lines -> runtime objects (``ActionCall``, ``TableEntry``) for a given
table, as p4c's BMv2 STF driver builds them.  Split out of ``parse``: reading STF needs no runtime tables.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

from p4exec.errors import SourceLoc
from p4exec.runtime.actions import ActionCall
from p4exec.runtime.match import Exact, FieldMatch, MatchKind
from p4exec.runtime.tables import Table, TableEntry
from p4exec.stf.commands import ActionSpec, AddEntry, StfError


def resolve_name(names: Iterable[str], name: str, what: str, loc: SourceLoc) -> str:
    """The full name STF's ``name`` means: exact, else the unique one ending in ``.name`` (p4c's driver
    does the same suffix search); ``hdr.h$1.f`` is read as ``hdr.h[1].f``."""
    names = list(names)
    for cand in (name, re.sub(r"\$([0-9]+)", r"[\1]", name)):
        if cand in names:
            return cand
        hits = [n for n in names if n.endswith("." + cand)]
        if len(hits) == 1:
            return hits[0]
        if len(hits) > 1:
            raise StfError(f"{what} {name!r} is ambiguous: {', '.join(sorted(hits))}", loc)
    raise StfError(f"no {what} {name!r}", loc)


def action_call(table: Table, spec: ActionSpec, loc: SourceLoc) -> ActionCall:
    """An ``ActionCall`` for ``table`` from an STF action spec (names resolved, arguments in order)."""
    aname = resolve_name(table.actions, spec.name, f"action of table {table.name}", loc)
    info = table.actions[aname]
    given = spec.arg_dict()
    unknown = set(given) - {p.name for p in info.params}
    missing = [p.name for p in info.params if p.name not in given]
    if unknown or missing:
        raise StfError(f"action {aname}: missing parameter(s) {missing}, unknown {sorted(unknown)}", loc)
    return ActionCall(aname, tuple(given[p.name] & ((1 << p.bitwidth) - 1) for p in info.params))


def table_entry(table: Table, stmt: AddEntry) -> TableEntry:
    """The ``TableEntry`` an ``add`` line means for ``table``, as p4c's BMv2 driver builds it: keys not
    given are 0 for exact fields and don't care otherwise; the priority is used only by tables that need
    one (and then it is required); STF priority ``p`` becomes runtime priority ``p + 1`` (STF allows 0)."""
    by_name = {f.name: i for i, f in enumerate(table.fields)}
    match: list[FieldMatch | None] = [Exact(0) if f.kind is MatchKind.EXACT else None for f in table.fields]
    for kname, kv in stmt.keys:
        i = by_name[resolve_name(by_name, kname, f"key field of table {table.name}", stmt.loc)]
        f = table.fields[i]
        try:
            match[i] = kv.to_match(f.kind, f.bitwidth)
        except ValueError as e:
            raise StfError(f"key {kname}: {e}", stmt.loc) from None
    if table.needs_priority:
        if stmt.priority is None:
            raise StfError(f"table {table.name} has ternary/range/optional keys: the entry needs a priority",
                           stmt.loc)
        # STF allows priority 0 (p4c's own tests use it), P4Runtime does not: shift by one, order kept.
        priority = stmt.priority + 1
    else:
        priority = 0
    return TableEntry(tuple(match), priority, action_call(table, stmt.action, stmt.loc))
