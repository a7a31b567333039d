"""The state budget: how much memory a pipeline's declared externs may take before anything is allocated.

A program declares its register, counter and meter arrays; a client that may push pipelines could otherwise
ask a switch for gigabytes (`register<bit<32>>(1 << 29)`).  `check` adds up what every declared array costs
and refuses a program above the budget with RESOURCE_EXHAUSTED naming the largest object, before
`DeviceState.from_p4info` allocates any of it.  The budget is one per process (a switch process runs one
pipeline at a time; `p4exec switch --state-budget-mb` sets it, ethlab passes the fabric's value).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from p4exec.runtime.errors import RuntimeOpError

DEFAULT_BUDGET = 1 << 30  # bytes
# What one cell costs in CPython (list slots; a meter cell is a __slots__ object with four 2-lists).
REGISTER_CELL = 8
COUNTER_CELL = 16  # packets and bytes lists
METER_CELL = 8 + 56 + 4 * (56 + 16)
VALUE_SET_MEMBER = 64

_budget = DEFAULT_BUDGET


@dataclass(frozen=True)
class Cost:
    kind: str
    name: str
    cells: int
    bytes: int


def set_budget(nbytes: int) -> None:
    """Set this process's state budget (bytes, > 0)."""
    global _budget
    if nbytes <= 0:
        raise ValueError("the state budget must be positive")
    _budget = nbytes


def budget() -> int:
    return _budget


def costs(p4info: Any) -> list[Cost]:
    """What each declared array of `p4info` would allocate."""
    out: list[Cost] = []
    for kind, items, per_cell in (("register", p4info.registers, REGISTER_CELL),
                                  ("counter", p4info.counters, COUNTER_CELL),
                                  ("meter", p4info.meters, METER_CELL),
                                  ("value_set", p4info.value_sets, VALUE_SET_MEMBER)):
        for obj in items:
            size = int(obj.size)
            out.append(Cost(kind, obj.preamble.name, size, max(size, 0) * per_cell))
    return out


def human(nbytes: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if nbytes >= 1 << shift:
            return f"{nbytes / (1 << shift):.1f} {unit}"
    return f"{nbytes} B"


def check(p4info: Any) -> None:
    """RESOURCE_EXHAUSTED if the declared state does not fit the budget; INVALID_ARGUMENT for a negative size."""
    items = costs(p4info)
    for c in items:
        if c.cells < 0:
            raise RuntimeOpError("INVALID_ARGUMENT", f"{c.kind} {c.name!r}: negative size {c.cells}")
    total = sum(c.bytes for c in items)
    if total <= _budget:
        return
    big = max(items, key=lambda c: c.bytes)
    raise RuntimeOpError(
        "RESOURCE_EXHAUSTED",
        f"{big.kind} {big.name!r} declares {big.cells} cells ({human(big.bytes)}); the program's state needs "
        f"{human(total)}, above this switch's state budget of {human(_budget)} (p4exec switch --state-budget-mb)")
