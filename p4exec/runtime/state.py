"""``DeviceState``: every runtime object of one pipeline, built from its P4Info, by name and by id.

P4Info does not say everything the data plane needs: selector key positions, the selector hash and a
table's default action when it is not const come from the compiler (``Table.set_selector_keys``,
``ActionProfile.set_hash``, ``Table.set_initial_default``, ``Table.add_initial_entries``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from p4exec.runtime import budget
from p4exec.runtime.actions import ActionCall, ActionInfo, ParamInfo, Scope
from p4exec.runtime.errors import RuntimeOpError, invalid
from p4exec.runtime.match import FieldMatch, MatchKind, covers, validate
from p4exec.runtime.pre import PacketReplication
from p4exec.runtime.profiles import ActionProfile, HashSpec
from p4exec.runtime.stateful import Counter, DirectCounter, DirectMeter, Meter, Register, Unit
from p4exec.runtime.tables import KeyField, Table


@dataclass
class Digest:
    """A digest type; the data plane appends tuples of field values, the P4Runtime server drains them."""

    name: str
    id: int
    pending: list[tuple[int, ...]] = field(default_factory=list)
    config: Any = None  # p4.v1.DigestEntry.Config once the controller enables the digest

    def emit(self, values: tuple[int, ...]) -> None:
        self.pending.append(values)

    def drain(self) -> list[tuple[int, ...]]:
        out, self.pending = self.pending, []
        return out


@dataclass
class ValueSet:
    """A parser value set: up to ``size`` members, each a tuple of field matches (``None``: any)."""

    name: str
    id: int
    size: int
    fields: tuple[KeyField, ...]
    members: list[tuple[FieldMatch | None, ...]] = field(default_factory=list)

    def set_members(self, members: list[tuple[FieldMatch | None, ...]]) -> None:
        """P4Runtime MODIFY (the only write): replace all members, all-or-nothing."""
        checked = []
        for m in members:
            if len(m) != len(self.fields):
                raise invalid(f"{self.name}: {len(self.fields)} match field(s) per member, {len(m)} given")
            checked.append(tuple(validate(f.kind, fm, f.bitwidth, f.name)
                                 for f, fm in zip(self.fields, m, strict=True)))
        if len(set(checked)) != len(checked):
            raise RuntimeOpError("ALREADY_EXISTS", f"{self.name}: duplicate members")
        if self.size and len(checked) > self.size:
            raise RuntimeOpError("RESOURCE_EXHAUSTED", f"{self.name}: more than {self.size} members")
        self.members = checked

    def matches(self, values: tuple[int, ...]) -> bool:
        """Data plane: does any member match these field values?"""
        return any(all(covers(f.kind, fm, v, f.bitwidth) for f, fm, v in zip(self.fields, m, values, strict=True))
                   for m in self.members)


def _unit(spec: Any) -> Unit:
    return Unit(int(spec.unit)) if spec.unit else Unit.BOTH


def _bytes_to_int(b: bytes) -> int:
    return int.from_bytes(b, "big") if b else 0


class DeviceState:
    """All runtime objects of one pipeline; see ``docs/architecture.md`` ("Runtime state")."""

    def __init__(self) -> None:
        self.actions: dict[str, ActionInfo] = {}
        self.tables: dict[str, Table] = {}
        self.action_profiles: dict[str, ActionProfile] = {}
        self.registers: dict[str, Register] = {}
        self.counters: dict[str, Counter] = {}
        self.direct_counters: dict[str, DirectCounter] = {}
        self.meters: dict[str, Meter] = {}
        self.direct_meters: dict[str, DirectMeter] = {}
        self.digests: dict[str, Digest] = {}
        self.value_sets: dict[str, ValueSet] = {}
        self.pre = PacketReplication()
        self.down_ports: set[int] = set()  # ports whose link is down (selector watch ports)
        self.by_id: dict[int, Any] = {}
        self.p4info: Any = None

    @classmethod
    def from_p4info(cls, p4info: Any) -> DeviceState:
        """Build from a ``p4.config.v1.P4Info`` message."""
        budget.check(p4info)  # before anything is allocated
        s = cls()
        s.p4info = p4info
        for a in p4info.actions:
            info = ActionInfo(a.preamble.name, a.preamble.id,
                              tuple(ParamInfo(p.name, p.id, p.bitwidth) for p in a.params))
            s.actions[info.name] = info
            s.by_id[info.id] = info
        act_by_id = {a.id: a for a in s.actions.values()}

        for t in p4info.tables:
            s._add_table(t, act_by_id)

        for ap in p4info.action_profiles:
            allowed: dict[str, ActionInfo] = {}
            for tid in ap.table_ids:
                tbl = s.by_id.get(tid)
                if isinstance(tbl, Table):
                    allowed.update(tbl.actions)
            prof = ActionProfile(
                ap.preamble.name, ap.preamble.id, allowed, size=int(ap.size),
                max_group_size=int(ap.max_group_size),
                sum_of_members=ap.WhichOneof("selector_size_semantics") == "sum_of_members",
                table_ids=tuple(ap.table_ids))
            if ap.with_selector:
                prof.set_hash(HashSpec())
            prof.down_ports = s.down_ports
            s.action_profiles[prof.name] = prof
            s.by_id[prof.id] = prof
        for t in s.tables.values():
            impl = getattr(t, "_implementation_id", 0)
            if impl:
                t.profile = s.by_id.get(impl)

        for c in p4info.counters:
            s._put(s.counters, Counter(c.preamble.name, c.preamble.id, int(c.size), _unit(c.spec)))
        for c in p4info.direct_counters:
            dc = DirectCounter(c.preamble.name, c.preamble.id, _name_of(s, c.direct_table_id), _unit(c.spec))
            s._put(s.direct_counters, dc)
            if dc.table in s.tables:
                s.tables[dc.table].direct_counter = dc.name
        for m in p4info.meters:
            s._put(s.meters, Meter(m.preamble.name, m.preamble.id, int(m.size), _meter_unit(m.spec)))
        for m in p4info.direct_meters:
            dm = DirectMeter(m.preamble.name, m.preamble.id, _name_of(s, m.direct_table_id), _meter_unit(m.spec))
            s._put(s.direct_meters, dm)
            if dm.table in s.tables:
                s.tables[dm.table].direct_meter = dm
        for r in p4info.registers:
            width = r.type_spec.bitstring.bit.bitwidth or r.type_spec.bitstring.int.bitwidth
            s._put(s.registers, Register(r.preamble.name, r.preamble.id, int(r.size), int(width)))
        for d in p4info.digests:
            s._put(s.digests, Digest(d.preamble.name, d.preamble.id))
        for v in p4info.value_sets:
            fields = tuple(KeyField(f.name, f.id, f.bitwidth, _kind(f)) for f in v.match)
            s._put(s.value_sets, ValueSet(v.preamble.name, v.preamble.id, int(v.size), fields))
        return s

    def _put(self, where: dict[str, Any], obj: Any) -> None:
        where[obj.name] = obj
        self.by_id[obj.id] = obj

    def _add_table(self, t: Any, act_by_id: dict[int, ActionInfo]) -> None:
        fields = [KeyField(f.name, f.id, f.bitwidth, _kind(f)) for f in t.match_fields]
        actions: dict[str, ActionInfo] = {}
        scopes: dict[str, Scope] = {}
        for ref in t.action_refs:
            info = act_by_id.get(ref.id)
            if info is not None:
                actions[info.name] = info
                scopes[info.name] = Scope(int(ref.scope))
        default = None
        const_default = bool(t.const_default_action_id)
        if t.HasField("initial_default_action"):
            ida = t.initial_default_action
            info = act_by_id.get(ida.action_id)
            if info is not None:
                by_pid = {a.param_id: _bytes_to_int(a.value) for a in ida.arguments}
                default = ActionCall(info.name, tuple(by_pid.get(p.id, 0) for p in info.params))
        if default is None and const_default:
            info = act_by_id.get(t.const_default_action_id)
            if info is not None and not info.params:
                default = ActionCall(info.name)
        if default is None and "NoAction" in actions:
            default = ActionCall("NoAction")
        table = Table(t.preamble.name, t.preamble.id, fields, actions, scopes, size=int(t.size),
                      is_const=bool(t.is_const_table), const_default=const_default, default=default,
                      idle_timeout=bool(t.idle_timeout_behavior))
        table._implementation_id = int(t.implementation_id)  # type: ignore[attr-defined]
        self.tables[table.name] = table
        self.by_id[table.id] = table

    # --------------------------------------------------------------------------------- helpers

    def action_call(self, action: str, args: dict[str, int] | None = None) -> ActionCall:
        """An ``ActionCall`` from parameter names, checked against the action's parameters."""
        info = self.actions.get(action)
        if info is None:
            raise invalid(f"unknown action {action!r}")
        return info.call(**(args or {}))

    def set_port_up(self, port: int, up: bool) -> None:
        """Link state of ``port``: selector members watching a down port are left out of selection."""
        if up:
            self.down_ports.discard(port)
        else:
            self.down_ports.add(port)
        for p in self.action_profiles.values():
            p.port_status_changed(port)

    def reset(self) -> None:
        """Back to the state right after loading: initial table contents, zero counters and registers,
        unconfigured meters, no members/groups, no multicast groups or clone sessions."""
        for t in self.tables.values():
            t.clear()
        for p in self.action_profiles.values():
            p.reset()
        for t in self.tables.values():
            t.reset()
        resettable: list[Register | Counter | Meter] = [*self.registers.values(), *self.counters.values(),
                                                        *self.meters.values()]
        for obj in resettable:
            obj.reset()
        for d in self.digests.values():
            d.pending.clear()
        for v in self.value_sets.values():
            v.members.clear()
        self.pre.reset()


def _kind(f: Any) -> MatchKind:
    if f.match_type:
        return MatchKind(int(f.match_type))
    other = getattr(f, "other_match_type", "")
    if other == "selector":
        return MatchKind.SELECTOR
    raise RuntimeOpError("UNIMPLEMENTED", f"match field {f.name}: unsupported match type {other or 'unspecified'!r}")


def _meter_unit(spec: Any) -> Unit:
    return Unit.PACKETS if int(spec.unit) == int(Unit.PACKETS) else Unit.BYTES


def _name_of(s: DeviceState, table_id: int) -> str:
    t = s.by_id.get(table_id)
    return t.name if isinstance(t, Table) else ""
