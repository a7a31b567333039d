"""Action descriptions (from P4Info) and the action-call checks shared by tables and action profiles."""
from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from p4exec.runtime.errors import invalid


@dataclass(frozen=True, slots=True)
class ActionCall:
    """An action with its arguments, in the action's parameter declaration order."""

    action: str
    args: tuple[int, ...] = ()


@dataclass(frozen=True)
class ParamInfo:
    name: str
    id: int
    bitwidth: int


@dataclass(frozen=True)
class ActionInfo:
    name: str
    id: int
    params: tuple[ParamInfo, ...] = ()

    def check(self, call: ActionCall) -> None:
        """INVALID_ARGUMENT unless ``call`` has one in-width value per parameter."""
        if len(call.args) != len(self.params):
            raise invalid(f"action {self.name} takes {len(self.params)} parameter(s), "
                          f"{len(call.args)} given")
        for v, p in zip(call.args, self.params, strict=True):
            if not isinstance(v, int) or v < 0 or v >> p.bitwidth:
                raise invalid(f"action {self.name}: value {v!r} of parameter {p.name} does not fit in "
                              f"{p.bitwidth} bits")

    def call(self, **kwargs: int) -> ActionCall:
        """Build a call from parameter names (handy in tests and the harness)."""
        missing = [p.name for p in self.params if p.name not in kwargs]
        extra = set(kwargs) - {p.name for p in self.params}
        if missing or extra:
            raise invalid(f"action {self.name}: missing {missing} / unknown {sorted(extra)} parameter(s)")
        return ActionCall(self.name, tuple(kwargs[p.name] for p in self.params))


class Scope(IntEnum):
    """Values equal ``p4.config.v1.ActionRef.Scope``."""

    TABLE_AND_DEFAULT = 0
    TABLE_ONLY = 1
    DEFAULT_ONLY = 2
