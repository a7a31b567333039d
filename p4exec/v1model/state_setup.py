"""A fresh DeviceState for a compiled program: P4Info's objects plus what P4Info does not carry."""
from __future__ import annotations

from p4exec.compiler.p4info import device_view
from p4exec.compiler.program import CompiledProgram
from p4exec.runtime import ActionCall, DeviceState, DirectCounter, DirectMeter, HashSpec, Table, Unit
from p4exec.runtime.match import Exact, FieldMatch, Lpm, MatchKind, Optional_, Range, Ternary
from p4exec.runtime.tables import KeyField, normalize_entry


def new_state(program: CompiledProgram) -> DeviceState:
    state = DeviceState.from_p4info(device_view(program.p4info, program.info))   # device widths (translation)
    configure_state(program, state)
    return state


_UNITS = {"packets": Unit.PACKETS, "bytes": Unit.BYTES, "packets_and_bytes": Unit.BOTH}


def configure_state(program: CompiledProgram, state: DeviceState) -> None:
    """Selector layout/hash, @hidden tables, defaults and initial (const) entries; the direct counters and
    meters P4Info leaves out with the tables nothing applies (p4c removes them) still exist for the code that
    names them, as such tables do."""
    for x in program.info.externs.values():
        if x.kind == "direct_counter" and x.name not in state.direct_counters:
            state.direct_counters[x.name] = DirectCounter(x.name, 0, x.tables[0] if x.tables else "",
                                                          _UNITS.get(x.unit, Unit.BOTH))
        elif x.kind == "direct_meter" and x.name not in state.direct_meters:
            state.direct_meters[x.name] = DirectMeter(x.name, 0, x.tables[0] if x.tables else "",
                                                      _UNITS.get(x.unit, Unit.BYTES))
    for t in program.info.tables.values():
        tbl = state.tables.get(t.name)
        if tbl is None:   # @hidden tables are not in P4Info
            fields = [KeyField(k.name, i + 1, k.width, MatchKind.from_name(k.match_kind))
                      for i, k in enumerate(t.keys)]
            acts = {r.action.name: state.actions.get(r.action.name) for r in t.actions}
            tbl = Table(t.name, 0, fields, {k: v for k, v in acts.items() if v is not None}, size=t.size)
            state.tables[t.name] = tbl
        sel = [(i, k.width) for i, k in enumerate(t.keys) if k.match_kind == "selector"]
        if sel:
            tbl.set_selector_keys(sel, len(t.keys))
        if t.implementation:
            x = program.info.externs[t.implementation]
            prof = state.action_profiles.get(x.name)
            if prof is not None:
                tbl.profile = prof
                if x.kind == "action_selector":
                    prof.set_hash(HashSpec(x.algo, x.output_width))
        if t.default_action is not None:
            tbl.set_initial_default(ActionCall(t.default_action, tuple(t.default_args)), const=t.default_const)
        if t.entries:
            entries = []
            for ce in t.entries:
                match = [_field_match(m) for m in ce.match]
                entries.append(normalize_entry(tbl, match, priority=ce.priority,
                                               action=ActionCall(ce.action, tuple(ce.args))))
            tbl.add_initial_entries(entries, const=t.const_entries)


def _field_match(m) -> FieldMatch | None:
    if m is None:
        return None
    kind = m[0]
    if kind == "exact":
        return Exact(m[1])
    if kind == "lpm":
        return Lpm(m[1], m[2])
    if kind == "ternary":
        return Ternary(m[1], m[2])
    if kind == "range":
        return Range(m[1], m[2])
    return Optional_(m[1])
