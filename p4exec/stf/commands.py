"""What an STF file says, as plain frozen dataclasses: one class per statement, plus key values and action
specs.  ``parse`` builds them, ``runner`` executes them and ``entries`` turns ``add``/``setdefault`` lines into
runtime table entries; split out of ``parse`` so the data model stands apart from the line parser.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from p4exec.errors import P4Error, SourceLoc
from p4exec.runtime.match import Exact, FieldMatch, Lpm, MatchKind, Optional_, Range, Ternary


class StfError(P4Error):
    """A malformed STF line; ``str()`` is ``file:line:col: error: message``."""


# ---------------------------------------------------------------------------------------------- values


@dataclass(frozen=True)
class KeyValue:
    """A key value as written in an ``add`` line, before the table's match kinds are known."""

    text: str
    value: int
    mask: int | None = None        # from '&&&' or from '*' digits
    prefix_len: int | None = None  # from '/len'
    written_bits: int | None = None  # digits * bits-per-digit for 0x/0b literals, None for decimal
    wildcard_bits: int = 0           # trailing don't-care bits ('*' digits), for LPM without '/len'

    def to_match(self, kind: MatchKind, bitwidth: int) -> FieldMatch | None:
        """The canonical field match (``None`` = don't care) this value means for a ``kind`` field.

        As p4c's BMv2 STF driver: a ternary value without ``&&&`` gets a mask of all ones over the digits
        written ('*' digits masked out); an LPM value without ``/len`` gets the written digits minus the '*'
        ones as prefix.  Values are truncated to ``bitwidth``.
        """
        full = (1 << bitwidth) - 1
        value = self.value & full
        if kind in (MatchKind.EXACT, MatchKind.OPTIONAL):
            return Exact(value) if kind is MatchKind.EXACT else Optional_(value)
        if kind is MatchKind.LPM:
            plen = self.prefix_len
            if plen is None:
                plen = bitwidth if self.written_bits is None else self.written_bits - self.wildcard_bits
            plen = max(0, min(plen, bitwidth))
            if plen == 0:
                return None
            pmask = full ^ ((1 << (bitwidth - plen)) - 1)
            return Lpm(value & pmask, plen)
        if kind is MatchKind.TERNARY:
            mask = self.mask
            if mask is None:
                mask = full if self.written_bits is None else (1 << self.written_bits) - 1
            mask &= full
            if mask == 0:
                return None
            return Ternary(value & mask, mask)
        if kind is MatchKind.RANGE:
            if self.mask is None:
                return Range(value, value)
            mask = self.mask & full
            low_bits = ~mask & full
            if low_bits & (low_bits + 1):  # only "high bits fixed, low bits free" is a range
                raise ValueError(f"{self.text!r} is not a contiguous range")
            r = Range(value & mask, (value & mask) | low_bits)
            return None if (r.low, r.high) == (0, full) else r
        raise ValueError(f"no STF key form for match kind {kind}")


@dataclass(frozen=True)
class ActionSpec:
    name: str
    args: tuple[tuple[str, int], ...] = ()

    def arg_dict(self) -> dict[str, int]:
        return dict(self.args)


# ------------------------------------------------------------------------------------------ statements


@dataclass(frozen=True)
class Stmt:
    loc: SourceLoc


@dataclass(frozen=True)
class AddEntry(Stmt):
    table: str
    priority: int | None
    keys: tuple[tuple[str, KeyValue], ...]
    action: ActionSpec
    handle: str | None = None


@dataclass(frozen=True)
class SetDefault(Stmt):
    table: str
    action: ActionSpec


@dataclass(frozen=True)
class RemoveAll(Stmt):
    pass


@dataclass(frozen=True)
class Packet(Stmt):
    port: int
    data: bytes


@dataclass(frozen=True)
class Expect(Stmt):
    """An expected output packet.  ``pattern`` is upper-case hex nibbles with '*' for any nibble;
    ``pattern is None`` means "any number of packets on this port"."""

    port: int
    pattern: str | None
    exact: bool = False  # '$' given: the packet must end where the pattern ends

    def matches(self, data: bytes) -> bool:
        if self.pattern is None:
            return True
        got = data.hex().upper()
        if len(got) < len(self.pattern) or (self.exact and len(got) != len(self.pattern)):
            return False
        return all(p == "*" or p == g for p, g in zip(self.pattern, got, strict=False))


@dataclass(frozen=True)
class NoPacket(Stmt):
    pass


@dataclass(frozen=True)
class Wait(Stmt):
    amount: float | None = None


@dataclass(frozen=True)
class MirroringAdd(Stmt):
    session: int
    port: int


@dataclass(frozen=True)
class MirroringAddMc(Stmt):
    session: int
    mgrp: int


@dataclass(frozen=True)
class MirroringDelete(Stmt):
    session: int


@dataclass(frozen=True)
class MirroringGet(Stmt):
    session: int


@dataclass(frozen=True)
class McMgrpCreate(Stmt):
    mgrp: int


@dataclass(frozen=True)
class McNodeCreate(Stmt):
    rid: int
    ports: tuple[int, ...]


@dataclass(frozen=True)
class McNodeUpdate(Stmt):
    handle: int
    ports: tuple[int, ...]


@dataclass(frozen=True)
class McNodeAssociate(Stmt):
    mgrp: int
    handle: int


@dataclass(frozen=True)
class RegisterRead(Stmt):
    name: str
    index: int


@dataclass(frozen=True)
class RegisterWrite(Stmt):
    name: str
    index: int
    value: int


@dataclass(frozen=True)
class RegisterReset(Stmt):
    name: str


@dataclass(frozen=True)
class CounterRead(Stmt):
    name: str
    index: int


@dataclass(frozen=True)
class CounterWrite(Stmt):
    name: str
    index: int
    packets: int
    bytes: int


@dataclass(frozen=True)
class CheckCounter(Stmt):
    """``check_counter NAME(INDEX) [packets|bytes OP VALUE]``; without a condition: packets == 0."""

    name: str
    index: int | str
    count_type: str | None = None  # "packets" / "bytes" / None
    op: str = "=="
    value: int = 0


@dataclass(frozen=True)
class MeterGetRates(Stmt):
    name: str
    index: int


@dataclass(frozen=True)
class MeterSetRates(Stmt):
    """Rates in BMv2 CLI units: (units per microsecond, burst in units); committed first, then peak.
    ``index is None`` for ``meter_array_set_rates`` (all cells)."""

    name: str
    index: int | None
    rates: tuple[tuple[float, int], ...] = field(default_factory=tuple)


def iter_statements(stmts: list[Stmt], kind: type) -> Iterator[Stmt]:
    """The statements of one type, in file order (handy for runners and tests)."""
    return (s for s in stmts if isinstance(s, kind))
