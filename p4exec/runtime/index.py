"""Lookup indexes of a table: one class per lookup strategy, each with ``add``/``remove``/``find``.

``find(mkey)`` takes the match-field values (selector fields removed) and returns the winning entry or
``None``.  Entries are ranked by (priority desc, insertion order asc) in priority tables and by prefix
length in LPM tables.  Indexes are updated on every write, so nothing they hold can go stale.

Writes may come from the P4Runtime server's thread while packets are looked up in another: every list a
``find`` iterates is replaced, never changed in place (copy on write), and dict updates are single
operations, so a lookup sees the table either before or after a write.
"""
from __future__ import annotations

from bisect import insort
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from p4exec.runtime.match import Exact, Lpm, MatchKind, Optional_, Ternary, prefix_mask

if TYPE_CHECKING:
    from p4exec.runtime.entry import KeyField, TableEntry


def _rank(e: TableEntry) -> tuple[int, int]:
    return (-e.priority, e._seq)


class ExactIndex:
    """All fields exact: one dict keyed by the key tuple (``find`` is the dict's own ``get``)."""

    def __init__(self, fields: Sequence[KeyField]):
        self.d: dict[tuple[int, ...], TableEntry] = {}
        self.find: Callable[[tuple[int, ...]], TableEntry | None] = self.d.get

    def add(self, e: TableEntry) -> None:
        self.d[tuple(m.value for m in e.match)] = e  # type: ignore[union-attr]

    def remove(self, e: TableEntry) -> None:
        del self.d[tuple(m.value for m in e.match)]  # type: ignore[union-attr]


class LpmIndex:
    """Exact fields plus one LPM field: a dict per prefix length, probed longest first."""

    def __init__(self, fields: Sequence[KeyField]):
        kinds = [f.kind for f in fields]
        self.li = kinds.index(MatchKind.LPM)
        self.width = fields[self.li].bitwidth
        self.single = len(fields) == 1
        self.by_len: dict[int, dict] = {}
        self.order: list[tuple[int, dict]] = []  # (mask, dict), longest prefix first
        self.find = self._find_single if self.single else self._find_multi

    def _key(self, match: tuple) -> tuple[int, object]:
        m = match[self.li]
        plen, v = (0, 0) if m is None else (m.prefix_len, m.value)
        if self.single:
            return plen, v
        return plen, (v, tuple(x.value for i, x in enumerate(match) if i != self.li))

    def add(self, e: TableEntry) -> None:
        plen, key = self._key(e.match)
        d = self.by_len.get(plen)
        if d is None:
            d = self.by_len[plen] = {}
            self.order = [(prefix_mask(p, self.width), self.by_len[p]) for p in sorted(self.by_len, reverse=True)]
        d[key] = e

    def remove(self, e: TableEntry) -> None:
        plen, key = self._key(e.match)
        d = self.by_len[plen]
        del d[key]
        if not d:
            del self.by_len[plen]
            self.order = [t for t in self.order if t[1] is not d]

    def _find_single(self, mkey: tuple[int, ...]) -> TableEntry | None:
        v = mkey[0]
        for mask, d in self.order:
            e = d.get(v & mask)
            if e is not None:
                return e
        return None

    def _find_multi(self, mkey: tuple[int, ...]) -> TableEntry | None:
        li = self.li
        v = mkey[li]
        rest = mkey[:li] + mkey[li + 1:]
        for mask, d in self.order:
            e = d.get((v & mask, rest))
            if e is not None:
                return e
        return None


def compile_entry(fields: Sequence[KeyField], match: tuple) -> tuple[int, int, tuple]:
    """(mask, value) over the concatenated non-range fields, plus range checks ``(field index, lo, hi)``."""
    mask = value = 0
    ranges = []
    for i, (f, m) in enumerate(zip(fields, match, strict=True)):
        if f.kind is MatchKind.RANGE:
            if m is not None:
                ranges.append((i, m.low, m.high))
            continue
        w = f.bitwidth
        mask <<= w
        value <<= w
        if m is None:
            continue
        if isinstance(m, Exact | Optional_):
            mask |= (1 << w) - 1
            value |= m.value
        elif isinstance(m, Ternary):
            mask |= m.mask
            value |= m.value
        elif isinstance(m, Lpm):
            mask |= prefix_mask(m.prefix_len, w)
            value |= m.value
    return mask, value, tuple(ranges)


class _KeyPacker:
    """Concatenates the non-range key values into one int, as :func:`compile_entry` lays them out."""

    def __init__(self, fields: Sequence[KeyField]):
        self.widths = tuple((i, f.bitwidth) for i, f in enumerate(fields) if f.kind is not MatchKind.RANGE)

    def __call__(self, mkey: tuple[int, ...]) -> int:
        k = 0
        for i, w in self.widths:
            k = (k << w) | mkey[i]
        return k


class PriorityListIndex:
    """Any range field: entries in rank order, first match wins (mask/value test, then range checks)."""

    def __init__(self, fields: Sequence[KeyField]):
        self.fields = fields
        self.pack = _KeyPacker(fields)
        self.items: list[tuple] = []  # (rank, mask, value, ranges, entry)

    def add(self, e: TableEntry) -> None:
        mask, value, ranges = compile_entry(self.fields, e.match)
        items = list(self.items)
        insort(items, (_rank(e), mask, value, ranges, e), key=lambda t: t[0])
        self.items = items

    def remove(self, e: TableEntry) -> None:
        self.items = [t for t in self.items if t[4] is not e]

    def find(self, mkey: tuple[int, ...]) -> TableEntry | None:
        kint = self.pack(mkey)
        for _, mask, value, ranges, e in self.items:
            if kint & mask == value and (not ranges or all(lo <= mkey[j] <= hi for j, lo, hi in ranges)):
                return e
        return None


class _MaskGroup:
    __slots__ = ("mask", "by_value", "top")

    def __init__(self, mask: int):
        self.mask = mask
        self.by_value: dict[int, list[tuple[tuple[int, int], TableEntry]]] = {}
        self.top = 0  # highest priority in the group


class TupleSpaceIndex:
    """Ternary / optional (no range): entries grouped by mask, one dict probe per distinct mask.

    Groups are visited by their highest priority, so the search stops as soon as no remaining group can
    beat the best match found.
    """

    def __init__(self, fields: Sequence[KeyField]):
        self.fields = fields
        self.pack = _KeyPacker(fields)
        self.groups: dict[int, _MaskGroup] = {}
        self.order: list[_MaskGroup] = []

    def _reorder(self) -> None:
        self.order = sorted(self.groups.values(), key=lambda g: -g.top)

    def add(self, e: TableEntry) -> None:
        mask, value, _ = compile_entry(self.fields, e.match)
        g = self.groups.get(mask)
        if g is None:
            g = self.groups[mask] = _MaskGroup(mask)
        lst = list(g.by_value.get(value, ()))
        insort(lst, (_rank(e), e), key=lambda t: t[0])
        g.by_value[value] = lst
        if e.priority > g.top or len(self.order) != len(self.groups):
            g.top = max(g.top, e.priority)
            self._reorder()

    def remove(self, e: TableEntry) -> None:
        mask, value, _ = compile_entry(self.fields, e.match)
        g = self.groups[mask]
        lst = [t for t in g.by_value[value] if t[1] is not e]
        if lst:
            g.by_value[value] = lst
        else:
            del g.by_value[value]
        if not g.by_value:
            del self.groups[mask]
        elif e.priority == g.top:
            g.top = max(lst2[0][1].priority for lst2 in g.by_value.values())
        self._reorder()

    def find(self, mkey: tuple[int, ...]) -> TableEntry | None:
        kint = self.pack(mkey)
        best = None
        best_rank = None
        for g in self.order:
            if best is not None and g.top < best.priority:
                break
            lst = g.by_value.get(kint & g.mask)
            if lst:
                rank, e = lst[0]
                if best_rank is None or rank < best_rank:
                    best, best_rank = e, rank
        return best


def make_index(fields: Sequence[KeyField]) -> ExactIndex | LpmIndex | PriorityListIndex | TupleSpaceIndex:
    kinds = [f.kind for f in fields]
    if MatchKind.RANGE in kinds:
        return PriorityListIndex(fields)
    if MatchKind.TERNARY in kinds or MatchKind.OPTIONAL in kinds or kinds.count(MatchKind.LPM) > 1:
        return TupleSpaceIndex(fields)
    if kinds.count(MatchKind.LPM) == 1:
        return LpmIndex(fields)
    return ExactIndex(fields)
