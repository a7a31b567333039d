"""Match-action tables: P4Runtime-exact validation on writes, fast lookups for the data plane.

The lookup structure (see :mod:`p4exec.runtime.index`) follows the key's match kinds: a dict for exact keys,
per-prefix-length dicts for LPM, mask groups (tuple space) for ternary/optional, a priority-ordered list when
a range field is present.  Ties between overlapping entries of equal priority go to the entry inserted first.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from operator import itemgetter
from typing import TYPE_CHECKING

from p4exec.runtime import changes
from p4exec.runtime.actions import ActionCall, ActionInfo, Scope
from p4exec.runtime.entry import KeyField, LookupResult, TableEntry
from p4exec.runtime.errors import RuntimeOpError, invalid
from p4exec.runtime.index import make_index
from p4exec.runtime.match import (
    FieldMatch,
    MatchKind,
    Range,
    normalize,
    validate,
)

if TYPE_CHECKING:
    from p4exec.runtime.profiles import ActionProfile
    from p4exec.runtime.stateful import DirectMeter



class Table:
    """A table built from its P4Info description; see module doc for the lookup structures."""

    def __init__(self, name: str, id: int, fields: Sequence[KeyField], actions: dict[str, ActionInfo],
                 scopes: dict[str, Scope] | None = None, size: int = 0, is_const: bool = False,
                 const_default: bool = False, default: ActionCall | None = None,
                 idle_timeout: bool = False):
        self.name = name
        self.id = id
        self.fields = tuple(f for f in fields if f.kind is not MatchKind.SELECTOR)
        self.actions = actions  # allowed actions by name
        self.scopes = scopes or {n: Scope.TABLE_AND_DEFAULT for n in actions}
        self.size = size
        self.is_const = is_const
        self.const_default = const_default
        self.idle_timeout = idle_timeout
        self.profile: ActionProfile | None = None
        self.direct_counter: str | None = None
        self.direct_meter: DirectMeter | None = None
        self.needs_priority = any(f.kind in (MatchKind.TERNARY, MatchKind.RANGE, MatchKind.OPTIONAL)
                                  for f in self.fields)
        self.generation = 0       # bumped by every change a lookup could see (p4exec/native keeps an index)
        self._initial_default = default
        self._initial_entries: list[TableEntry] = []
        self._entries: dict[tuple, TableEntry] = {}
        self._seq = 0
        self.default_action: ActionCall | None = default
        self._miss = LookupResult(False, default, None)
        # Full-key layout: positions of the match fields and of the selector fields in the lookup key.
        sel = [(i, f.bitwidth) for i, f in enumerate(fields) if f.kind is MatchKind.SELECTOR]
        self._configure_layout(sel, len(fields))

    # ------------------------------------------------------------------------------------ layout

    def set_selector_keys(self, selector_fields: Sequence[tuple[int, int]], key_len: int) -> None:
        """Declare where selector fields sit in the lookup key: ``(position, bitwidth)`` pairs.

        P4Info omits selector fields, so the compiler tells the table; ``key_len`` is the full key length.
        """
        self._configure_layout(list(selector_fields), key_len)

    def _configure_layout(self, sel: list[tuple[int, int]], key_len: int) -> None:
        self.selector_fields = tuple(sel)
        sel_pos = {p for p, _ in sel}
        self._match_pos = tuple(i for i in range(key_len) if i not in sel_pos)
        if len(self._match_pos) != len(self.fields):
            raise ValueError(f"table {self.name}: key layout has {len(self._match_pos)} match fields, "
                             f"P4Info has {len(self.fields)}")
        self._plain_key = not sel
        self._match_key = _tuple_getter(self._match_pos)
        self._sel_values = _tuple_getter(tuple(p for p, _ in sel))
        self._sel_widths = tuple(w for _, w in sel)
        self._rebuild()

    # ------------------------------------------------------------------------------- validation

    def _check_action(self, call: ActionCall, for_default: bool) -> None:
        info = self.actions.get(call.action)
        if info is None:
            raise invalid(f"action {call.action!r} is not an action of table {self.name}")
        scope = self.scopes.get(call.action, Scope.TABLE_AND_DEFAULT)
        # The spec gives scope violations their own code: PERMISSION_DENIED.
        if for_default and scope is Scope.TABLE_ONLY:
            raise RuntimeOpError("PERMISSION_DENIED",
                                 f"action {call.action} is @tableonly in {self.name}, cannot be the default")
        if not for_default and scope is Scope.DEFAULT_ONLY:
            raise RuntimeOpError("PERMISSION_DENIED",
                                 f"action {call.action} is @defaultonly in {self.name}, cannot be in an entry")
        info.check(call)

    def _canonical(self, entry: TableEntry) -> tuple[FieldMatch | None, ...]:
        if len(entry.match) != len(self.fields):
            raise invalid(f"table {self.name} has {len(self.fields)} match field(s), "
                          f"{len(entry.match)} given")
        match = tuple(validate(f.kind, m, f.bitwidth, f.name) for f, m in zip(self.fields, entry.match,
                                                                              strict=True))
        if self.needs_priority:
            if not isinstance(entry.priority, int) or entry.priority <= 0 or entry.priority >= 1 << 31:
                raise invalid(f"table {self.name} needs a priority in [1, 2^31-1], got {entry.priority}")
        elif entry.priority != 0:
            raise invalid(f"table {self.name} has no ternary/range/optional field: priority must be 0")
        return match

    def _check_target(self, entry: TableEntry, keep_ok: bool = False) -> None:
        if keep_ok and entry.action is None and entry.member_id is None and entry.group_id is None:
            return  # MODIFY without an action: the action stays as it is
        if self.profile is None:
            if entry.member_id is not None or entry.group_id is not None:
                raise invalid(f"table {self.name} has no action profile: use a direct action")
            if entry.action is None:
                raise invalid(f"entry for {self.name} has no action")
            self._check_action(entry.action, for_default=False)
            return
        if entry.action is not None:
            raise invalid(f"table {self.name} is indirect ({self.profile.name}): use a member or group")
        if (entry.member_id is None) == (entry.group_id is None):
            raise invalid(f"entry for {self.name} needs exactly one of member_id / group_id")
        if entry.member_id is not None:
            self.profile.require_member(entry.member_id)
        elif not self.profile.with_selector:
            raise invalid(f"{self.profile.name} is an action profile without selector: no groups")
        else:
            self.profile.require_group(entry.group_id)  # type: ignore[arg-type]

    def _checked(self, entry: TableEntry, *, check_const: bool = True, modify: bool = False) -> TableEntry:
        if check_const and self.is_const:
            raise RuntimeOpError("PERMISSION_DENIED", f"table {self.name} is const (const entries)")
        if not self.fields and not modify:
            raise invalid(f"table {self.name} has no key: only its default entry can be written")
        match = self._canonical(entry)
        self._check_target(entry, keep_ok=modify)
        return entry if match == entry.match else _replace_match(entry, match)

    def _changed(self) -> None:
        self.generation += 1
        changes.WRITES.n += 1

    # ----------------------------------------------------------------------------------- writes

    def insert(self, entry: TableEntry, *, _const: bool = False, trusted: bool = False) -> TableEntry:
        """Add ``entry``; ALREADY_EXISTS if an entry with the same match (and priority) exists.

        ``trusted``: the caller (the P4Runtime fast path) has already checked the match, priority
        and action against this table's layout, and the table is not const."""
        if not trusted:
            entry = self._checked(entry, check_const=not _const)
        entries = self._entries
        key = (entry.match, entry.priority)
        if entries.setdefault(key, entry) is not entry:  # one hash of the key (big batches: per entry)
            raise RuntimeOpError("ALREADY_EXISTS", f"{self.name}: entry already exists")
        if self.size and len(entries) > self.size:
            del entries[key]  # the last one added: the order of the others is kept
            raise RuntimeOpError("RESOURCE_EXHAUSTED", f"table {self.name} is full ({self.size} entries)")
        self._seq += 1
        entry._seq = self._seq
        if self.direct_meter is not None and entry.meter is None:
            entry.meter = self.direct_meter.new_cell()
        if self.idle_timeout:
            entry.last_hit_ns = time.monotonic_ns()  # "since last hit" counts from insertion until a hit
        if self.profile is not None:
            self._ref(entry, +1)
        entry._result = LookupResult(True, entry.action, entry) if entry.action is not None else None
        self._index.add(entry)
        self._changed()
        return entry

    def modify(self, entry: TableEntry, *, trusted: bool = False) -> TableEntry:
        """Replace the action (and idle timeout / metadata) of the entry with ``entry``'s match.

        Without an action (nor member/group) the action stays, as P4Runtime MODIFY allows.
        """
        if not trusted:
            entry = self._checked(entry, modify=True)
        old = self._entries.get(entry.key)
        if old is None:
            raise RuntimeOpError("NOT_FOUND", f"{self.name}: no such entry to modify")
        if old.is_const:
            raise RuntimeOpError("PERMISSION_DENIED", f"{self.name}: the entry is const")
        if entry.action is not None or entry.member_id is not None or entry.group_id is not None:
            self._ref(entry, +1)
            self._ref(old, -1)
            old.action, old.member_id, old.group_id = entry.action, entry.member_id, entry.group_id
        old.idle_timeout_ns, old.metadata = entry.idle_timeout_ns, entry.metadata
        old.controller_metadata = entry.controller_metadata
        self._set_result(old)
        self._changed()
        return old

    def delete(self, entry: TableEntry) -> TableEntry:
        """Remove the entry with ``entry``'s match and priority (its action is ignored)."""
        if self.is_const:
            raise RuntimeOpError("PERMISSION_DENIED", f"table {self.name} is const (const entries)")
        match = self._canonical(entry)
        old = self._entries.get((match, entry.priority))
        if old is None:
            raise RuntimeOpError("NOT_FOUND", f"{self.name}: no such entry to delete")
        if old.is_const:
            raise RuntimeOpError("PERMISSION_DENIED", f"{self.name}: the entry is const")
        del self._entries[old.key]
        self._ref(old, -1)
        self._index_remove(old)
        old._result = None  # entry <-> result is a cycle: frozen by the switch's gc.freeze it would never be freed
        self._changed()
        return old

    def get(self, match: tuple[FieldMatch | None, ...], priority: int = 0) -> TableEntry | None:
        """The entry with this (canonical) match and priority, if any."""
        return self._entries.get((tuple(match), priority))

    def entries(self) -> list[TableEntry]:
        return list(self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        """Remove every entry (const ones too): pipeline reset, not a P4Runtime write."""
        for e in self._entries.values():
            self._ref(e, -1)
            e._result = None  # break the entry <-> result cycle (see delete)
        self._entries.clear()
        self._rebuild()
        self._changed()

    # --------------------------------------------------------------------------- default action

    def set_default(self, call: ActionCall | None) -> None:
        """P4Runtime MODIFY of the default entry; ``None`` restores the P4 program's default."""
        if self.const_default:
            raise RuntimeOpError("PERMISSION_DENIED", f"table {self.name} has a const default action")
        if call is None:
            call = self._initial_default
        else:
            self._check_action(call, for_default=True)
        self.default_action = call
        self._miss = LookupResult(False, call, None)
        self._changed()

    @property
    def default_changed(self) -> bool:
        """Has the control plane set a default action (one not restored to the program's since)?"""
        return self.default_action is not self._initial_default

    def reset_default(self) -> None:
        """P4Runtime MODIFY of the default entry without an action: back to the program's default."""
        self.set_default(None)

    def set_initial_default(self, call: ActionCall | None, const: bool = False) -> None:
        """The program's default action (compiler side; bypasses the const check)."""
        self._initial_default = call
        self.const_default = const
        self.default_action = call
        self._miss = LookupResult(False, call, None)
        self._changed()

    def add_initial_entries(self, entries: Iterable[TableEntry], const: bool | None = None) -> None:
        """Install the program's ``entries``; they come back after :meth:`reset`.

        ``const`` defaults to the table's ``is_const``; const entries cannot be modified or deleted.
        (p4c gives the N entries of a ``const entries`` list priorities N, N-1, ..., 1.)
        """
        for e in entries:
            e.is_const = self.is_const if const is None else const
            self._initial_entries.append(e)
            self.insert(_copy_entry(e), _const=True)

    def reset(self) -> None:
        """Back to the program's initial state: initial entries and default, zero counters."""
        self.clear()
        self._seq = 0
        self.default_action = self._initial_default
        self._miss = LookupResult(False, self._initial_default, None)
        for e in self._initial_entries:
            self.insert(_copy_entry(e), _const=True)
        self._changed()

    # ----------------------------------------------------------------------------- bookkeeping

    def _ref(self, entry: TableEntry, delta: int) -> None:
        if self.profile is None:
            return
        if entry.member_id is not None:
            self.profile.ref_member(entry.member_id, delta)
        elif entry.group_id is not None:
            self.profile.ref_group(entry.group_id, delta)

    def _set_result(self, entry: TableEntry) -> None:
        entry._result = LookupResult(True, entry.action, entry) if entry.action is not None else None

    # -------------------------------------------------------------------------------- indexing

    def _rebuild(self) -> None:
        self._index = make_index(self.fields)
        self._find = self._index.find
        for e in sorted(getattr(self, "_entries", {}).values(), key=lambda x: x._seq):
            self._index.add(e)

    def _index_add(self, e: TableEntry) -> None:
        self._index.add(e)

    def _index_remove(self, e: TableEntry) -> None:
        self._index.remove(e)

    # ---------------------------------------------------------------------------------- lookup

    def lookup(self, key: tuple[int, ...], packet_len: int = 0) -> LookupResult:
        """Data-plane lookup; ``key`` has one int per key field in declaration order incl. selectors."""
        e = self._find(key if self._plain_key else self._match_key(key))
        if e is None:
            return self._miss
        e.packet_count += 1
        e.byte_count += packet_len
        if self.idle_timeout:
            e.last_hit_ns = time.monotonic_ns()
        r = e._result
        if r is not None:
            return r
        return self._resolve_indirect(e, key)

    def _resolve_indirect(self, e: TableEntry, key: tuple[int, ...]) -> LookupResult:
        """An entry without a cached result: an action profile's member or group, or an entry that a
        writer thread deleted between our index hit and here (delete drops the cache). The lookup then
        answers as if it had run just before the delete, or misses; it never fails on half a write."""
        if e.action is not None:
            return LookupResult(True, e.action, e)
        prof = self.profile
        if prof is None:
            return self._miss
        call: ActionCall | None
        try:
            if e.member_id is not None:
                call = prof.members[e.member_id]
            else:
                call = prof.select_values(e.group_id, self._sel_values(key), self._sel_widths)  # type: ignore[arg-type]
        except KeyError:  # the member or group went with a concurrent delete
            return self._miss
        if call is None:  # empty group: BMv2 treats the lookup as a miss
            return self._miss
        return LookupResult(True, call, e)


def _tuple_getter(positions: tuple[int, ...]) -> Callable[[tuple[int, ...]], tuple[int, ...]]:
    """key -> the key's values at `positions`, always as a tuple (itemgetter runs in C; it returns a bare
    value for one position, hence the wrappers)."""
    if not positions:
        return lambda _key: ()
    if len(positions) == 1:
        (i,) = positions
        return lambda key: (key[i],)
    return itemgetter(*positions)


def _replace_match(e: TableEntry, match: tuple[FieldMatch | None, ...]) -> TableEntry:
    c = _copy_entry(e)
    c.match = match
    return c


def _copy_entry(e: TableEntry) -> TableEntry:
    return TableEntry(match=e.match, priority=e.priority, action=e.action, member_id=e.member_id,
                      group_id=e.group_id, idle_timeout_ns=e.idle_timeout_ns, metadata=e.metadata,
                      is_const=e.is_const, controller_metadata=e.controller_metadata)


def normalize_entry(table: Table, match: Sequence[FieldMatch | None], **kw: object) -> TableEntry:
    """A ``TableEntry`` from hand-written matches (harness, STF): don't-care forms become ``None``."""
    fm = tuple(normalize(f.kind, m, f.bitwidth) for f, m in zip(table.fields, match, strict=True))
    return TableEntry(match=fm, **kw)  # type: ignore[arg-type]


__all__ = ["KeyField", "LookupResult", "Table", "TableEntry", "ActionCall", "Range", "normalize_entry"]
