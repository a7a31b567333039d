"""Runtime state shared by the compiled data plane and the P4Runtime server (see docs/architecture.md)."""
from __future__ import annotations

from p4exec.runtime.actions import ActionCall, ActionInfo, ParamInfo, Scope
from p4exec.runtime.errors import RuntimeOpError
from p4exec.runtime.match import Exact, FieldMatch, Lpm, MatchKind, Optional_, Range, Ternary
from p4exec.runtime.pre import CloneSession, PacketReplication
from p4exec.runtime.profiles import ActionProfile, HashSpec
from p4exec.runtime.state import DeviceState, Digest, ValueSet
from p4exec.runtime.stateful import (
    GREEN,
    RED,
    YELLOW,
    Counter,
    DirectCounter,
    DirectMeter,
    Meter,
    Register,
    Unit,
)
from p4exec.runtime.tables import KeyField, LookupResult, Table, TableEntry

__all__ = [
    "ActionCall", "ActionInfo", "ParamInfo", "Scope", "RuntimeOpError",
    "Exact", "FieldMatch", "Lpm", "MatchKind", "Optional_", "Range", "Ternary",
    "CloneSession", "PacketReplication", "ActionProfile", "HashSpec", "DeviceState", "Digest", "ValueSet",
    "GREEN", "YELLOW", "RED", "Counter", "DirectCounter", "DirectMeter", "Meter", "Register", "Unit",
    "KeyField", "LookupResult", "Table", "TableEntry",
]
