"""Runtime state shared by the compiled data plane and the P4Runtime server (see docs/architecture.md)."""
from __future__ import annotations

from p4sim.runtime.errors import RuntimeOpError
from p4sim.runtime.match import Exact, FieldMatch, Lpm, MatchKind, Optional_, Range, Ternary

__all__ = ["RuntimeOpError", "Exact", "FieldMatch", "Lpm", "MatchKind", "Optional_", "Range", "Ternary"]
