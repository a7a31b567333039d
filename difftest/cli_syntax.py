"""STF ``add`` lines as `simple_switch_CLI` words: names resolved against the BMv2 JSON, key values made
canonical by p4exec's STF layer (so both targets get the same entry), priorities turned around.

STF (and P4Runtime) priority: larger wins; BMv2's: smaller wins. p4exec's STF layer maps STF priority p to
runtime priority p + 1; BMv2 gets ``PRIORITY_PIVOT - (p + 1)``.
"""

from __future__ import annotations

from typing import Any

from p4exec.errors import SourceLoc
from p4exec.runtime.match import Exact, FieldMatch, Lpm, Optional_, Range, Ternary
from p4exec.runtime.tables import Table
from p4exec.stf import parse as S

PRIORITY_PIVOT = 1 << 24


class Bmv2Names:
    """The object names of one BMv2 JSON, by kind, for STF's suffix lookup."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.tables = {t["name"]: t for p in config["pipelines"] for t in p["tables"]}
        self.actions = {a["name"]: a for a in config["actions"]}
        self.counters = {c["name"]: c for c in config.get("counter_arrays", [])}
        self.registers = {r["name"]: r for r in config.get("register_arrays", [])}
        self.meters = {m["name"]: m for m in config.get("meter_arrays", [])}

    def table(self, name: str, loc: SourceLoc) -> str:
        return S.resolve_name(self.tables, name, "table", loc)

    def action_of(self, table: str, name: str, loc: SourceLoc) -> str:
        return S.resolve_name(self.tables[table]["actions"], name, f"action of table {table}", loc)


def _key_word(json_kind: str, fm: FieldMatch | None, width: int) -> str:
    full = (1 << width) - 1
    if json_kind == "exact":
        assert isinstance(fm, Exact | Optional_), fm
        return hex(fm.value)
    if json_kind == "lpm":
        if fm is None:
            return "0x0/0"
        assert isinstance(fm, Lpm), fm
        return f"{fm.value:#x}/{fm.prefix_len}"
    if json_kind in ("ternary", "optional"):
        if fm is None:
            return "0x0&&&0x0"
        if isinstance(fm, Exact | Optional_):
            return f"{fm.value:#x}&&&{full:#x}"
        assert isinstance(fm, Ternary), fm
        return f"{fm.value:#x}&&&{fm.mask:#x}"
    if json_kind == "range":
        if fm is None:
            return f"0x0->{full:#x}"
        if isinstance(fm, Exact):
            return f"{fm.value:#x}->{fm.value:#x}"
        assert isinstance(fm, Range), fm
        return f"{fm.low:#x}->{fm.high:#x}"
    if json_kind == "valid":
        assert isinstance(fm, Exact), fm
        return str(1 if fm.value else 0)
    raise ValueError(f"match kind {json_kind!r} has no CLI form")


def action_words(names: Bmv2Names, table: str, spec: S.ActionSpec, loc: SourceLoc) -> list[str]:
    action = names.action_of(table, spec.name, loc)
    given = spec.arg_dict()
    words = [action]
    params = names.actions[action]["runtime_data"]
    missing = [p["name"] for p in params if p["name"] not in given]
    if missing:
        raise S.StfError(f"action {action}: missing parameter(s) {missing}", loc)
    return words + [hex(given[p["name"]] & ((1 << p["bitwidth"]) - 1)) for p in params]


def table_add(names: Bmv2Names, embedded: Table, st: S.AddEntry) -> tuple[str, str]:
    """(table name, CLI command) for one ``add`` line."""
    table = names.table(st.table, st.loc)
    entry = S.table_entry(embedded, st)
    keys = names.tables[table]["key"]
    if len(keys) != len(embedded.fields):
        raise S.StfError(f"table {table}: BMv2 has {len(keys)} key fields, p4exec {len(embedded.fields)}", st.loc)
    words = [_key_word(k["match_type"], m, f.bitwidth) for k, m, f in zip(keys, entry.match, embedded.fields,
                                                                            strict=True)]
    action, *args = action_words(names, table, st.action, st.loc)
    cmd = ["table_add", table, action, *words, "=>", *args]
    if names.tables[table]["match_type"] in ("ternary", "range"):
        cmd.append(str(PRIORITY_PIVOT - entry.priority))
    return table, " ".join(cmd)
