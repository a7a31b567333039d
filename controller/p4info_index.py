"""Name-based view of a P4Info: find tables, actions, fields and externs by the names a person writes.

A full name (`MyIngress.ipv4_lpm`) always works; a short one (`ipv4_lpm`) works when exactly one object of that
kind ends with it, as in p4runtime-shell. Lookups fail with a message that lists what does exist.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from google.protobuf import text_format
from p4.config.v1 import p4info_pb2

KINDS = ("tables", "actions", "action_profiles", "counters", "direct_counters", "meters", "direct_meters",
         "registers", "digests", "controller_packet_metadata", "value_sets")


def load_p4info(path: str | Path) -> p4info_pb2.P4Info:
    """Read a P4Info in text format (`.txtpb`/`.txt`) or binary (`.bin`)."""
    data = Path(path).read_bytes()
    info = p4info_pb2.P4Info()
    if Path(path).suffix == ".bin":
        info.ParseFromString(data)
    else:
        text_format.Parse(data.decode(), info)
    return info


@dataclass(frozen=True)
class Field:
    """A match field, action parameter or packet-metadata field: id, name, width (and match kind)."""

    id: int
    name: str
    bitwidth: int
    match_type: str = ""


class P4InfoIndex:
    """Indexes one P4Info by kind, full name, short name and id."""

    def __init__(self, p4info: p4info_pb2.P4Info) -> None:
        self.p4info = p4info
        self._by_name: dict[str, dict[str, object]] = {}
        self._by_id: dict[int, object] = {}
        self._short: dict[tuple[str, str], object] = {}  # resolved short names (builders run per entry)
        self._fields: dict[int, list[Field]] = {}  # match fields / params per table / action id
        for kind in KINDS:
            names: dict[str, object] = {}
            for obj in getattr(p4info, kind):
                names[obj.preamble.name] = obj
                self._by_id[obj.preamble.id] = obj
            self._by_name[kind] = names

    def get(self, kind: str, name: str) -> object:
        names = self._by_name[kind]
        if name in names:
            return names[name]
        found = self._short.get((kind, name))
        if found is not None:
            return found
        found = self._resolve(kind, name)
        self._short[(kind, name)] = found
        return found

    def _resolve(self, kind: str, name: str) -> object:
        names = self._by_name[kind]
        matches = [full for full in names if full.endswith("." + name) or full.split(".")[-1] == name]
        if len(matches) == 1:
            return names[matches[0]]
        known = ", ".join(sorted(names)) or "none"
        if matches:
            raise KeyError(f"{kind[:-1]} name {name!r} is ambiguous: {', '.join(sorted(matches))}")
        raise KeyError(f"no {kind[:-1].replace('_', ' ')} named {name!r} (known: {known})")

    def by_id(self, obj_id: int) -> object:
        return self._by_id[obj_id]

    def names(self, kind: str) -> Iterable[str]:
        return self._by_name[kind].keys()

    def table(self, name: str) -> p4info_pb2.Table:
        return self.get("tables", name)  # type: ignore[return-value]

    def action(self, name: str) -> p4info_pb2.Action:
        return self.get("actions", name)  # type: ignore[return-value]

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
        raise KeyError(f"table {table.preamble.name} has no match field {name!r} "
                       f"(fields: {', '.join(f.name for f in fields)})")

    def params(self, action: p4info_pb2.Action) -> list[Field]:
        cached = self._fields.get(action.preamble.id)
        if cached is None:
            cached = self._fields[action.preamble.id] = [Field(p.id, p.name, p.bitwidth) for p in action.params]
        return cached

    def packet_metadata(self, which: str) -> list[Field]:
        """Fields of the `@controller_header("packet_in"/"packet_out")` header, in order."""
        header = self.get("controller_packet_metadata", which)
        return [Field(m.id, m.name, m.bitwidth) for m in header.metadata]  # type: ignore[attr-defined]

    def table_action_names(self, table: p4info_pb2.Table) -> list[str]:
        return [self._by_id[ref.id].preamble.name for ref in table.action_refs]  # type: ignore[attr-defined]
