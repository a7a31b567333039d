"""A table entry, its key fields and a lookup's result: the values tables, indexes and counters share."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from p4exec.runtime.actions import ActionCall
from p4exec.runtime.match import FieldMatch, MatchKind

if TYPE_CHECKING:
    from p4exec.runtime.stateful import MeterCell


@dataclass(frozen=True)
class KeyField:
    name: str
    id: int
    bitwidth: int
    kind: MatchKind


@dataclass(eq=False, slots=True)
class TableEntry:
    """One entry.  ``match`` has one item per non-selector key field, ``None`` = don't care.

    ``priority`` has P4Runtime meaning (larger wins).  Either ``action`` (direct) or ``member_id`` /
    ``group_id`` (action profile) is set.  Direct counter data and the direct meter cell live here, and so
    do the fields a P4Runtime Read echoes (``idle_timeout_ns``, ``metadata``, ``controller_metadata``):
    the table is the one store of its entries.
    """

    match: tuple[FieldMatch | None, ...]
    priority: int = 0
    action: ActionCall | None = None
    member_id: int | None = None
    group_id: int | None = None
    idle_timeout_ns: int = 0
    metadata: bytes = b""
    packet_count: int = 0
    byte_count: int = 0
    meter: MeterCell | None = None
    last_hit_ns: int = 0
    is_const: bool = False
    controller_metadata: int = 0
    _result: LookupResult | None = field(default=None, repr=False)
    _seq: int = field(default=0, repr=False)

    @property
    def key(self) -> tuple[tuple[FieldMatch | None, ...], int]:
        return (self.match, self.priority)


class LookupResult:
    """What ``Table.lookup`` returns: hit flag, action to run (``None``: nothing to run), matched entry."""

    __slots__ = ("hit", "action", "entry")

    def __init__(self, hit: bool, action: ActionCall | None, entry: TableEntry | None):
        self.hit = hit
        self.action = action
        self.entry = entry

    def __repr__(self) -> str:
        return f"LookupResult(hit={self.hit}, action={self.action}, entry={self.entry})"
