"""STF statements as calls of BMv2's Thrift runtime interface: names resolved against the BMv2 JSON, key
values made canonical by p4exec's STF layer (so both targets get the same entry), priorities turned around.

The calls go over controller/bmv2_thrift.py's session (the one the fabric's side channel uses), so STF runs
need no `simple_switch_CLI` process and get typed answers (entry handles, counter values) instead of text.

STF (and P4Runtime) priority: larger wins; BMv2's: smaller wins. p4exec's STF layer maps STF priority p to
runtime priority p + 1; BMv2 gets ``PRIORITY_PIVOT - (p + 1)``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from controller.bmv2_thrift import (
    SIMPLE_PRE,
    SIMPLE_SWITCH,
    STANDARD,
    Arg,
    binaries,
    binary,
    boolean,
    double,
    i32,
    i64,
    string,
    struct,
    structs,
)
from p4exec.errors import SourceLoc
from p4exec.runtime.match import Exact, FieldMatch, Lpm, Optional_, Range, Ternary
from p4exec.runtime.tables import Table
from p4exec.stf import parse as S

PRIORITY_PIVOT = 1 << 24
CONTEXT = 0  # simple_switch has one context

# BmMatchParamType (BMv2's standard.thrift); BmMatchParam carries the kind's struct in field 2 + kind
EXACT, LPM, TERNARY, VALID, RANGE = 0, 1, 2, 3, 4


@dataclass(frozen=True)
class Call:
    """One Thrift call, and how a person would write it (for failure messages)."""

    service: str
    method: str
    args: tuple[Arg, ...]
    text: str


def call(service: str, method: str, text: str, *args: Arg) -> Call:
    return Call(service, method, (i32(1, CONTEXT), *args) if service != SIMPLE_SWITCH else args, text)


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


def _bytes(value: int, width: int) -> bytes:
    return (value & ((1 << width) - 1)).to_bytes((width + 7) // 8, "big")


def match_param(json_kind: str, fm: FieldMatch | None, width: int) -> tuple[tuple[Arg, ...], str]:
    """One BmMatchParam (its fields) for a key field, and its CLI-style spelling; None = don't care."""
    full = (1 << width) - 1
    if json_kind == "exact":
        assert isinstance(fm, Exact | Optional_), fm
        return (i32(1, EXACT), struct(2, binary(1, _bytes(fm.value, width)))), hex(fm.value)
    if json_kind == "lpm":
        if fm is None:
            value, plen = 0, 0
        else:
            assert isinstance(fm, Lpm), fm
            value, plen = fm.value, fm.prefix_len
        return (i32(1, LPM), struct(3, binary(1, _bytes(value, width)), i32(2, plen))), f"{value:#x}/{plen}"
    if json_kind in ("ternary", "optional"):
        if fm is None:
            value, mask = 0, 0
        elif isinstance(fm, Exact | Optional_):
            value, mask = fm.value, full
        else:
            assert isinstance(fm, Ternary), fm
            value, mask = fm.value, fm.mask
        return ((i32(1, TERNARY), struct(4, binary(1, _bytes(value, width)), binary(2, _bytes(mask, width)))),
                f"{value:#x}&&&{mask:#x}")
    if json_kind == "range":
        if fm is None:
            low, high = 0, full
        elif isinstance(fm, Exact):
            low, high = fm.value, fm.value
        else:
            assert isinstance(fm, Range), fm
            low, high = fm.low, fm.high
        return ((i32(1, RANGE), struct(6, binary(1, _bytes(low, width)), binary(2, _bytes(high, width)))),
                f"{low:#x}->{high:#x}")
    if json_kind == "valid":
        assert isinstance(fm, Exact), fm
        return (i32(1, VALID), struct(5, boolean(1, bool(fm.value)))), str(1 if fm.value else 0)
    raise ValueError(f"match kind {json_kind!r} has no BMv2 runtime form")


def action_data(names: Bmv2Names, table: str, spec: S.ActionSpec, loc: SourceLoc) -> tuple[str, list[bytes]]:
    """The action's full name and its parameters, each as many bytes as its width needs, in JSON order."""
    action = names.action_of(table, spec.name, loc)
    given = spec.arg_dict()
    params = names.actions[action]["runtime_data"]
    missing = [p["name"] for p in params if p["name"] not in given]
    if missing:
        raise S.StfError(f"action {action}: missing parameter(s) {missing}", loc)
    return action, [_bytes(given[p["name"]], p["bitwidth"]) for p in params]


def _hexes(data: list[bytes]) -> list[str]:
    return [hex(int.from_bytes(d, "big")) for d in data]


def table_add(names: Bmv2Names, embedded: Table, st: S.AddEntry) -> tuple[str, Call]:
    """(table name, bm_mt_add_entry call) for one ``add`` line."""
    table = names.table(st.table, st.loc)
    entry = S.table_entry(embedded, st)
    keys = names.tables[table]["key"]
    if len(keys) != len(embedded.fields):
        raise S.StfError(f"table {table}: BMv2 has {len(keys)} key fields, p4exec {len(embedded.fields)}", st.loc)
    params = [match_param(k["match_type"], m, f.bitwidth) for k, m, f in zip(keys, entry.match, embedded.fields,
                                                                           strict=True)]
    action, data = action_data(names, table, st.action, st.loc)
    words = ["table_add", table, action, *(text for _, text in params), "=>", *_hexes(data)]
    options: tuple[Arg, ...] = ()
    if names.tables[table]["match_type"] in ("ternary", "range"):
        options = (i32(1, PRIORITY_PIVOT - entry.priority),)
        words.append(str(PRIORITY_PIVOT - entry.priority))
    return table, call(STANDARD, "bm_mt_add_entry", " ".join(words), string(2, table),
                       structs(3, [fields for fields, _ in params]), string(4, action), binaries(5, data),
                       struct(6, *options))


def set_default(names: Bmv2Names, st: S.SetDefault) -> Call:
    table = names.table(st.table, st.loc)
    action, data = action_data(names, table, st.action, st.loc)
    text = " ".join(["table_set_default", table, action, *_hexes(data)])
    return call(STANDARD, "bm_mt_set_default_action", text, string(2, table), string(3, action), binaries(4, data))


def clear_tables(names: Bmv2Names) -> list[Call]:
    return [call(STANDARD, "bm_mt_clear_entries", f"table_clear {t}", string(2, t), boolean(3, False))
            for t in names.tables]


def port_map(ports: Iterable[int]) -> str:
    """BMv2's port set: a string of 0s and 1s whose last character is port 0."""
    chosen = set(ports)
    return "".join("1" if p in chosen else "0" for p in range(max(chosen, default=-1), -1, -1))


def mirroring(st: S.Stmt) -> Call:
    if isinstance(st, S.MirroringAdd):
        return Call(SIMPLE_SWITCH, "mirroring_session_add", (i32(1, st.session), struct(2, i32(1, st.port))),
                    f"mirroring_add {st.session} {st.port}")
    if isinstance(st, S.MirroringAddMc):
        return Call(SIMPLE_SWITCH, "mirroring_session_add", (i32(1, st.session), struct(2, i32(2, st.mgrp))),
                    f"mirroring_add_mc {st.session} {st.mgrp}")
    if isinstance(st, S.MirroringDelete):
        return Call(SIMPLE_SWITCH, "mirroring_session_delete", (i32(1, st.session),),
                    f"mirroring_delete {st.session}")
    assert isinstance(st, S.MirroringGet), st
    return Call(SIMPLE_SWITCH, "mirroring_session_get", (i32(1, st.session),), f"mirroring_get {st.session}")


def multicast(st: S.Stmt, group_handles: dict[int, int]) -> Call:
    """A PRE statement; a group is named by its id in STF and by the handle its creation returned in BMv2."""
    if isinstance(st, S.McMgrpCreate):
        return call(SIMPLE_PRE, "bm_mc_mgrp_create", f"mc_mgrp_create {st.mgrp}", i32(2, st.mgrp))
    if isinstance(st, S.McNodeCreate | S.McNodeUpdate):
        ports = " ".join(map(str, st.ports))
        if isinstance(st, S.McNodeCreate):
            return call(SIMPLE_PRE, "bm_mc_node_create", f"mc_node_create {st.rid} {ports}", i32(2, st.rid),
                        string(3, port_map(st.ports)), string(4, ""))
        return call(SIMPLE_PRE, "bm_mc_node_update", f"mc_node_update {st.handle} {ports}", i32(2, st.handle),
                    string(3, port_map(st.ports)), string(4, ""))
    assert isinstance(st, S.McNodeAssociate), st
    return call(SIMPLE_PRE, "bm_mc_node_associate", f"mc_node_associate {st.mgrp} {st.handle}",
                i32(2, group_handles.get(st.mgrp, st.mgrp)), i32(3, st.handle))


def register(st: S.RegisterRead | S.RegisterWrite | S.RegisterReset, name: str) -> Call:
    if isinstance(st, S.RegisterRead):
        return call(STANDARD, "bm_register_read", f"register_read {name} {st.index}", string(2, name),
                    i32(3, st.index))
    if isinstance(st, S.RegisterWrite):
        return call(STANDARD, "bm_register_write", f"register_write {name} {st.index} {st.value}", string(2, name),
                    i32(3, st.index), i64(4, st.value))
    return call(STANDARD, "bm_register_reset", f"register_reset {name}", string(2, name))


def counter_cell(names: Bmv2Names, full: str, cell: int, verb: str, *value: Arg) -> Call:
    """bm_counter_{read,write} of a counter array, or bm_mt_{read,write}_counter of a direct counter's entry
    (`cell` is then BMv2's entry handle)."""
    info = names.counters[full]
    text = f"counter_{verb} {full} {cell}"
    if info.get("is_direct"):
        return call(STANDARD, f"bm_mt_{verb}_counter", text, string(2, info["binding"]), i32(3, cell), *value)
    return call(STANDARD, f"bm_counter_{verb}", text, string(2, full), i32(3, cell), *value)


def counter_value(packets: int, nbytes: int) -> Arg:
    """BmCounterValue: bytes are field 1, packets field 2."""
    return struct(4, i64(1, nbytes), i64(2, packets))


def meter_rates(names: Bmv2Names, full: str, cell: int | None, rates: list[tuple[float, int]]) -> Call:
    """Rates in units per microsecond with burst sizes; a direct meter's cell is BMv2's entry handle."""
    configs = [(double(1, rate), i32(2, burst)) for rate, burst in rates]
    text = " ".join(f"{rate:g}:{burst}" for rate, burst in rates)
    if cell is None:
        return call(STANDARD, "bm_meter_array_set_rates", f"meter_array_set_rates {full} {text}", string(2, full),
                    structs(3, configs))
    info = names.meters[full]
    target = info["binding"] if info.get("is_direct") else full
    method = "bm_mt_set_meter_rates" if info.get("is_direct") else "bm_meter_set_rates"
    return call(STANDARD, method, f"meter_set_rates {full} {cell} {text}", string(2, target), i32(3, cell),
                structs(4, configs))


def meter_get(names: Bmv2Names, full: str, cell: int) -> Call:
    info = names.meters[full]
    target = info["binding"] if info.get("is_direct") else full
    method = "bm_mt_get_meter_rates" if info.get("is_direct") else "bm_meter_get_rates"
    return call(STANDARD, method, f"meter_get_rates {full} {cell}", string(2, target), i32(3, cell))
