"""One typed index of a P4Info, shared by the P4Runtime server (ids) and the controller (names).

By id: `by_id[section][id]`, `table(id)`, `action(id)`, `lookup(section, id, what)` — an unknown id
raises `unknown_error(...)` (the server's subclass makes it NOT_FOUND). By name: `get(kind, name)`
takes a full name (`MyIngress.ipv4_lpm`) or a unique short one (`ipv4_lpm`, as p4runtime-shell
does) and fails with a message listing what exists; `table(name)`, `action(name)`. Fields (match
fields, parameters, packet metadata) as `Field` records. It sits at the bottom of the package tree
(it needs only the P4Info protobufs), so both sides import it without a climb.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from p4.config.v1 import p4info_pb2

# P4Info sections with a preamble, by their attribute name in P4Info.
KINDS = ("tables", "actions", "action_profiles", "counters", "direct_counters", "meters", "direct_meters",
         "registers", "digests", "controller_packet_metadata", "value_sets")
_PRIORITY_KINDS = (p4info_pb2.MatchField.TERNARY, p4info_pb2.MatchField.RANGE, p4info_pb2.MatchField.OPTIONAL)


class UnknownP4InfoObject(KeyError):
    """An id or name the P4Info does not have."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown P4Info object"


@dataclass(frozen=True)
class Field:
    """A match field, action parameter or packet-metadata field: id, name, width (and match kind)."""

    id: int
    name: str
    bitwidth: int
    match_type: str = ""


class P4InfoIndex:
    """Indexes one P4Info by kind, id, full name and short name."""

    def __init__(self, p4info: p4info_pb2.P4Info) -> None:
        self.p4info = p4info
        self.by_id: dict[str, dict[int, Any]] = {}
        self.by_name: dict[str, dict[str, Any]] = {}
        self._any_id: dict[int, Any] = {}
        for kind in KINDS:
            items = getattr(p4info, kind)
            self.by_id[kind] = {o.preamble.id: o for o in items}
            self.by_name[kind] = {o.preamble.name: o for o in items}
            self._any_id.update(self.by_id[kind])
        self.match_fields_by_table = {t.preamble.id: {m.id: m for m in t.match_fields} for t in p4info.tables}
        self.action_params = {a.preamble.id: {p.id: p for p in a.params} for a in p4info.actions}
        self._short: dict[tuple[str, str], Any] = {}  # resolved short names (builders run per entry)
        self._fields: dict[int, list[Field]] = {}  # match fields / params per table / action id

    @classmethod
    def build(cls, p4info: p4info_pb2.P4Info):
        return cls(p4info)

    def unknown_error(self, message: str) -> Exception:
        return UnknownP4InfoObject(message)

    # ---------------------------------------------------------------- by id
    def lookup(self, section: str, obj_id: int, what: str) -> Any:
        try:
            return self.by_id[section][obj_id]
        except KeyError:
            raise self.unknown_error(f"unknown {what} id {obj_id}") from None

    def object(self, obj_id: int) -> Any:
        """Any object by its (globally unique) id."""
        try:
            return self._any_id[obj_id]
        except KeyError:
            raise self.unknown_error(f"unknown P4Info id {obj_id:#x}") from None

    def table(self, key: int | str) -> p4info_pb2.Table:
        return self.lookup("tables", key, "table") if isinstance(key, int) else self.get("tables", key)

    def action(self, key: int | str) -> p4info_pb2.Action:
        return self.lookup("actions", key, "action") if isinstance(key, int) else self.get("actions", key)

    def action_profile(self, key: int | str) -> p4info_pb2.ActionProfile:
        if isinstance(key, int):
            return self.lookup("action_profiles", key, "action profile")
        return self.get("action_profiles", key)

    # ---------------------------------------------------------------- by name
    def get(self, kind: str, name: str) -> Any:
        names = self.by_name[kind]
        if name in names:
            return names[name]
        found = self._short.get((kind, name))
        if found is None:
            found = self._short[(kind, name)] = self._resolve(kind, name)
        return found

    def _resolve(self, kind: str, name: str) -> Any:
        names = self.by_name[kind]
        matches = [full for full in names if full.endswith("." + name) or full.split(".")[-1] == name]
        if len(matches) == 1:
            return names[matches[0]]
        if matches:
            raise UnknownP4InfoObject(f"{kind[:-1]} name {name!r} is ambiguous: {', '.join(sorted(matches))}")
        known = ", ".join(sorted(names)) or "none"
        raise UnknownP4InfoObject(f"no {kind[:-1].replace('_', ' ')} named {name!r} (known: {known})")

    def names(self, kind: str) -> Iterable[str]:
        return self.by_name[kind].keys()

    # ---------------------------------------------------------------- fields and table facts
    def match_fields(self, table: p4info_pb2.Table) -> list[Field]:
        cached = self._fields.get(table.preamble.id)
        if cached is None:
            kinds = p4info_pb2.MatchField.MatchType
            cached = [Field(m.id, m.name, m.bitwidth, kinds.Name(m.match_type).lower()) for m in table.match_fields]
            self._fields[table.preamble.id] = cached
        return cached

    def match_field(self, table: p4info_pb2.Table, name: str) -> Field:
        fields = self.match_fields(table)
        for f in fields:
            if f.name == name or f.name.split(".")[-1] == name:
                return f
        raise UnknownP4InfoObject(f"table {table.preamble.name} has no match field {name!r} "
                                  f"(fields: {', '.join(f.name for f in fields)})")

    def params(self, action: p4info_pb2.Action) -> list[Field]:
        cached = self._fields.get(action.preamble.id)
        if cached is None:
            cached = self._fields[action.preamble.id] = [Field(p.id, p.name, p.bitwidth) for p in action.params]
        return cached

    def packet_metadata(self, which: str) -> list[Field]:
        """Fields of the `@controller_header("packet_in"/"packet_out")` header, in order (none: [])."""
        header = self.by_name["controller_packet_metadata"].get(which)
        if header is None:
            return []
        return [Field(m.id, m.name, m.bitwidth) for m in header.metadata]

    def table_action_names(self, table: p4info_pb2.Table) -> list[str]:
        return [self._any_id[ref.id].preamble.name for ref in table.action_refs]

    @staticmethod
    def table_needs_priority(table: p4info_pb2.Table) -> bool:
        """Tables with ternary, range or optional fields order entries by priority."""
        return any(m.match_type in _PRIORITY_KINDS for m in table.match_fields)

    def table_profile(self, table: p4info_pb2.Table) -> p4info_pb2.ActionProfile | None:
        if not table.implementation_id:
            return None
        return self.by_id["action_profiles"].get(table.implementation_id)
