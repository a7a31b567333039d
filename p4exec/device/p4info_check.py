"""A pushed P4Info checked on its own: a pipeline pushed with a P4Info only (no device config) has nothing
else to be compared with, so duplicate ids, negative widths or dangling references must be refused here
(INVALID_ARGUMENT naming the object) instead of becoming runtime state that later fails oddly."""
from __future__ import annotations

from typing import Any

from p4exec.runtime.errors import RuntimeOpError

MAX_BITWIDTH = 1 << 16  # bits; far wider than any header field
SECTIONS = ("tables", "actions", "action_profiles", "counters", "direct_counters", "meters", "direct_meters",
            "controller_packet_metadata", "value_sets", "registers", "digests", "externs")


def _bad(message: str) -> RuntimeOpError:
    return RuntimeOpError("INVALID_ARGUMENT", f"P4Info: {message}")


def _width(what: str, bitwidth: int, allow_zero: bool = False) -> None:
    """Zero is allowed where P4Runtime uses it: a field or parameter of a translated type (sdn_string)."""
    if bitwidth < 0 or bitwidth > MAX_BITWIDTH or (bitwidth == 0 and not allow_zero):
        raise _bad(f"{what}: bitwidth {bitwidth} outside [{0 if allow_zero else 1}, {MAX_BITWIDTH}]")


def _unique(what: str, ids: list[int]) -> None:
    seen: set[int] = set()
    for i in ids:
        if i in seen:
            raise _bad(f"{what}: id {i} given twice")
        seen.add(i)


def check_p4info(p4info: Any) -> None:
    """INVALID_ARGUMENT unless ids are unique and non-zero, names unique per kind, widths and sizes sane, and
    references (actions of a table, direct resources, profiles) point at objects that exist."""
    ids: dict[int, str] = {}
    for section in SECTIONS:
        names: set[str] = set()
        for obj in getattr(p4info, section, ()):
            if section == "externs":
                for inst in obj.instances:
                    _preamble(inst.preamble, f"extern {inst.preamble.name!r}", ids, set())
                continue
            pre = obj.preamble
            _preamble(pre, f"{section[:-1]} {pre.name!r}", ids, names)
            if hasattr(obj, "size") and obj.size < 0:
                raise _bad(f"{section[:-1]} {pre.name!r}: negative size {obj.size}")
    actions = {a.preamble.id: a for a in p4info.actions}
    tables = {t.preamble.id for t in p4info.tables}
    profiles = {p.preamble.id for p in p4info.action_profiles}
    for a in p4info.actions:
        _unique(f"action {a.preamble.name!r} params", [p.id for p in a.params])
        for p in a.params:
            _width(f"action {a.preamble.name!r} param {p.name!r}", p.bitwidth, allow_zero=True)
    for t in p4info.tables:
        what = f"table {t.preamble.name!r}"
        _unique(f"{what} match fields", [m.id for m in t.match_fields])
        for m in t.match_fields:
            _width(f"{what} match field {m.name!r}", m.bitwidth, allow_zero=True)
        for r in t.action_refs:
            if r.id not in actions:
                raise _bad(f"{what}: unknown action id {r.id}")
        if t.implementation_id and t.implementation_id not in profiles:
            raise _bad(f"{what}: unknown implementation id {t.implementation_id}")
        for d in t.direct_resource_ids:
            if d not in ids:
                raise _bad(f"{what}: unknown direct resource id {d}")
    for section in ("direct_counters", "direct_meters"):
        for d in getattr(p4info, section):
            if d.direct_table_id not in tables:
                raise _bad(f"{section[:-1]} {d.preamble.name!r}: unknown table id {d.direct_table_id}")
    for p in p4info.action_profiles:
        for tid in p.table_ids:
            if tid not in tables:
                raise _bad(f"action profile {p.preamble.name!r}: unknown table id {tid}")
    for r in p4info.registers:
        spec = r.type_spec.bitstring
        width = spec.bit.bitwidth or spec.int.bitwidth or spec.varbit.max_bitwidth
        _width(f"register {r.preamble.name!r}", width)
    for c in p4info.controller_packet_metadata:
        _unique(f"controller header {c.preamble.name!r} fields", [m.id for m in c.metadata])
        for m in c.metadata:
            _width(f"controller header {c.preamble.name!r} field {m.name!r}", m.bitwidth, allow_zero=True)
    for v in p4info.value_sets:
        for m in v.match:
            _width(f"value set {v.preamble.name!r} field {m.name!r}", m.bitwidth)


def _preamble(pre: Any, what: str, ids: dict[int, str], names: set[str]) -> None:
    if pre.id == 0:
        raise _bad(f"{what}: id 0")
    if pre.id in ids:
        raise _bad(f"{what}: id {pre.id:#x} is also {ids[pre.id]}")
    ids[pre.id] = what
    if pre.name in names:
        raise _bad(f"{what}: name given twice")
    names.add(pre.name)
