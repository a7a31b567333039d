"""Id -> P4Info object lookups for one pipeline, built once per SetForwardingPipelineConfig."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from p4.config.v1 import p4info_pb2

from p4exec.p4runtime.errors import P4RuntimeError

# P4Info sections that carry a preamble, by the attribute name in P4Info.
SECTIONS = (
    "tables", "actions", "action_profiles", "counters", "direct_counters", "meters",
    "direct_meters", "controller_packet_metadata", "value_sets", "registers", "digests", "externs",
)


@dataclass
class P4InfoIndex:
    """Fast lookups into a P4Info; raising NOT_FOUND for unknown ids (spec)."""

    p4info: p4info_pb2.P4Info
    by_id: dict[str, dict[int, object]] = field(default_factory=dict)
    by_name: dict[str, dict[str, Any]] = field(default_factory=dict)
    match_fields: dict[int, dict[int, p4info_pb2.MatchField]] = field(default_factory=dict)
    action_params: dict[int, dict[int, p4info_pb2.Action.Param]] = field(default_factory=dict)

    @classmethod
    def build(cls, p4info: p4info_pb2.P4Info) -> P4InfoIndex:
        idx = cls(p4info)
        for section in SECTIONS:
            if section == "externs":
                continue
            items = getattr(p4info, section)
            idx.by_id[section] = {o.preamble.id: o for o in items}
            idx.by_name[section] = {o.preamble.name: o for o in items}
        for table in p4info.tables:
            idx.match_fields[table.preamble.id] = {m.id: m for m in table.match_fields}
        for action in p4info.actions:
            idx.action_params[action.preamble.id] = {p.id: p for p in action.params}
        return idx

    def get(self, section: str, obj_id: int, what: str):
        try:
            return self.by_id[section][obj_id]
        except KeyError:
            raise P4RuntimeError("NOT_FOUND", f"unknown {what} id {obj_id}") from None

    def table(self, table_id: int) -> p4info_pb2.Table:
        return self.get("tables", table_id, "table")

    def action(self, action_id: int) -> p4info_pb2.Action:
        return self.get("actions", action_id, "action")

    def action_profile(self, ap_id: int) -> p4info_pb2.ActionProfile:
        return self.get("action_profiles", ap_id, "action profile")

    def table_needs_priority(self, table: p4info_pb2.Table) -> bool:
        """Tables with ternary, range or optional fields order entries by priority."""
        kinds = (p4info_pb2.MatchField.TERNARY, p4info_pb2.MatchField.RANGE,
                 p4info_pb2.MatchField.OPTIONAL)
        return any(m.match_type in kinds for m in table.match_fields)

    def table_profile(self, table: p4info_pb2.Table) -> p4info_pb2.ActionProfile | None:
        if not table.implementation_id:
            return None
        return self.by_id["action_profiles"].get(table.implementation_id)

    def packet_metadata(self, name: str) -> list[p4info_pb2.ControllerPacketMetadata.Metadata]:
        cpm = self.by_name["controller_packet_metadata"].get(name)
        return list(cpm.metadata) if cpm is not None else []
