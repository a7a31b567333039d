"""Match kinds and field matches, with P4Runtime's canonical-form validation.

A field match is a small frozen dataclass; ``None`` in its place means "don't care" (P4Runtime omits the
field).  :func:`validate` enforces the spec's canonical form (what the P4Runtime server must reject);
:func:`normalize` is the lenient variant for hand-written entries (harness, STF): it turns don't-care forms
such as ``Lpm(x, 0)`` or ``Ternary(x, 0)`` into ``None`` and clears bits the match ignores.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from p4exec.runtime.errors import invalid


class MatchKind(IntEnum):
    """Values equal ``p4.config.v1.MatchField.MatchType``; SELECTOR is p4exec's own (not in P4Info)."""

    EXACT = 2
    LPM = 3
    TERNARY = 4
    RANGE = 5
    OPTIONAL = 6
    SELECTOR = 100

    @classmethod
    def from_name(cls, name: str) -> MatchKind:
        return cls[name.upper()]


@dataclass(frozen=True, slots=True)
class Exact:
    value: int


@dataclass(frozen=True, slots=True)
class Lpm:
    value: int
    prefix_len: int


@dataclass(frozen=True, slots=True)
class Ternary:
    value: int
    mask: int


@dataclass(frozen=True, slots=True)
class Range:
    low: int
    high: int


@dataclass(frozen=True, slots=True)
class Optional_:  # noqa: N801 - trailing underscore: `Optional` is taken by typing
    value: int


FieldMatch = Exact | Lpm | Ternary | Range | Optional_

_TYPE_FOR = {
    MatchKind.EXACT: Exact, MatchKind.LPM: Lpm, MatchKind.TERNARY: Ternary,
    MatchKind.RANGE: Range, MatchKind.OPTIONAL: Optional_,
}


def prefix_mask(prefix_len: int, width: int) -> int:
    return ((1 << prefix_len) - 1) << (width - prefix_len)


def _fits(v: int, width: int, what: str, name: str) -> None:
    if not isinstance(v, int) or v < 0 or v >> width:
        raise invalid(f"{name}: {what} {v!r} does not fit in {width} bits")


def validate(kind: MatchKind, fm: FieldMatch | None, width: int, name: str = "field") -> FieldMatch | None:
    """Check ``fm`` is P4Runtime-canonical for a ``kind`` field of ``width`` bits; raise INVALID_ARGUMENT."""
    if fm is None:
        if kind is MatchKind.EXACT:
            raise invalid(f"{name}: an exact match field cannot be omitted (don't care)")
        return None
    want = _TYPE_FOR.get(kind)
    if want is None or type(fm) is not want:
        raise invalid(f"{name}: {type(fm).__name__} given for a {kind.name} field")
    # type(fm) is the kind's own class (checked above): branch on it, so each branch knows its fields
    if isinstance(fm, Exact | Optional_):
        _fits(fm.value, width, "value", name)
    elif isinstance(fm, Lpm):
        _fits(fm.value, width, "value", name)
        plen = fm.prefix_len
        if not isinstance(plen, int) or plen < 0 or plen > width:
            raise invalid(f"{name}: prefix length {plen!r} out of [1, {width}]")
        if plen == 0:
            raise invalid(f"{name}: a /0 LPM match must be omitted (don't care)")
        if fm.value & ~prefix_mask(plen, width):
            raise invalid(f"{name}: LPM value has bits set beyond the /{plen} prefix")
    elif isinstance(fm, Ternary):
        _fits(fm.value, width, "value", name)
        _fits(fm.mask, width, "mask", name)
        if fm.mask == 0:
            raise invalid(f"{name}: a ternary match with mask 0 must be omitted (don't care)")
        if fm.value & ~fm.mask:
            raise invalid(f"{name}: ternary value has bits outside the mask")
    else:
        _fits(fm.low, width, "low", name)
        _fits(fm.high, width, "high", name)
        if fm.low > fm.high:
            raise invalid(f"{name}: range low {fm.low} > high {fm.high}")
        if fm.low == 0 and fm.high == (1 << width) - 1:
            raise invalid(f"{name}: a full range must be omitted (don't care)")
    return fm


def normalize(kind: MatchKind, fm: FieldMatch | None, width: int) -> FieldMatch | None:
    """Lenient canonicalisation: don't-care forms become ``None``, ignored bits are cleared.

    Values wider than ``width`` and wrong types are still errors (via :func:`validate`).
    """
    if fm is None:
        return None
    full = (1 << width) - 1
    if isinstance(fm, Lpm) and kind is MatchKind.LPM:
        if fm.prefix_len == 0:
            return None
        if 0 < fm.prefix_len <= width:
            fm = Lpm(fm.value & prefix_mask(fm.prefix_len, width), fm.prefix_len)
    elif isinstance(fm, Ternary) and kind is MatchKind.TERNARY:
        if fm.mask == 0:
            return None
        fm = Ternary(fm.value & fm.mask, fm.mask)
    elif isinstance(fm, Range) and kind is MatchKind.RANGE:
        if fm.low == 0 and fm.high == full:
            return None
    elif isinstance(fm, Exact) and kind in (MatchKind.TERNARY, MatchKind.LPM, MatchKind.OPTIONAL,
                                             MatchKind.RANGE):
        # A plain value for a wider kind: match it exactly.
        return normalize(kind, _exact_as(kind, fm.value, width), width)
    return validate(kind, fm, width)


def _exact_as(kind: MatchKind, value: int, width: int) -> FieldMatch:
    if kind is MatchKind.TERNARY:
        return Ternary(value, (1 << width) - 1)
    if kind is MatchKind.LPM:
        return Lpm(value, width)
    if kind is MatchKind.RANGE:
        return Range(value, value)
    return Optional_(value)


def covers(kind: MatchKind, fm: FieldMatch | None, v: int, width: int) -> bool:
    """Reference semantics: does ``fm`` match value ``v``?  (Slow; used by tests and brute-force checks.)"""
    if fm is None:
        return True
    if isinstance(fm, Exact | Optional_):
        return v == fm.value
    if isinstance(fm, Lpm):
        return (v & prefix_mask(fm.prefix_len, width)) == fm.value
    if isinstance(fm, Ternary):
        return (v & fm.mask) == fm.value
    return fm.low <= v <= fm.high
