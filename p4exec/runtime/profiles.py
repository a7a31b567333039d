"""Action profiles and action selectors (members, weighted groups), with BMv2's member choice.

BMv2 (with its P4Runtime server) picks a group member as ``members[h % n]``: ``h`` is the selector's hash
(its declared algorithm over the selector key fields, packed as in :mod:`p4exec.runtime.hashes`; the
declared output width is not used by BMv2, nor here) and ``members`` are the group's members in ascending
member *handle* order.  Handles are assigned like BMv2's handle manager: the lowest free handle at member
creation, so usually creation order.  Weights (our reading): a member of weight ``w`` appears ``w`` times in
a row.  An empty group makes the table lookup a miss.

Members may watch a port (P4Runtime ``watch_port``): while that port is down the member is left out of the
selection, as BMv2's P4Runtime server deactivates it; a group with no live member is a miss too.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from p4exec.runtime import changes
from p4exec.runtime.actions import ActionCall, ActionInfo
from p4exec.runtime.errors import RuntimeOpError, invalid
from p4exec.runtime.hashes import CrcConfig, Fields, make_hasher

HASH_MEMO_MAX = 1 << 16


@dataclass(frozen=True)
class HashSpec:
    """The selector's hash: algorithm name (as in :mod:`hashes`) and declared output width."""

    algo: str = "crc16"
    out_width: int = 16
    crc_config: CrcConfig | None = None


@dataclass
class Group:
    group_id: int
    members: dict[int, int]  # member id -> weight, in the order given
    max_size: int = 0
    expanded: tuple[int, ...] = ()  # live member ids, weight-expanded, ascending member handle
    watch: dict[int, int] = field(default_factory=dict)  # member id -> watched port
    order: tuple[int, ...] = ()  # member ids in ascending handle order
    # members whose watch port came in P4Runtime's deprecated int32 `watch` (Read answers in that form)
    legacy_watch: frozenset[int] = frozenset()


@dataclass
class ActionProfile:
    """``ActionProfile`` (members only) or, with a :class:`HashSpec`, an ``ActionSelector``."""

    name: str
    id: int
    actions: dict[str, ActionInfo] = field(default_factory=dict)
    size: int = 0
    max_group_size: int = 0
    sum_of_members: bool = False  # P4Info selector size semantics; default is sum of weights
    hash_spec: HashSpec | None = None
    table_ids: tuple[int, ...] = ()
    members: dict[int, ActionCall] = field(default_factory=dict)
    groups: dict[int, Group] = field(default_factory=dict)
    generation: int = 0    # bumped by every change a lookup could see (p4exec/native keeps an index)
    _handles: dict[int, int] = field(default_factory=dict)  # member id -> BMv2-style handle
    _member_refs: dict[int, int] = field(default_factory=dict)
    _group_refs: dict[int, int] = field(default_factory=dict)
    _hasher: Callable[[Fields], int] | None = None
    # selector fields -> hash: a pure function of the fields, so it needs no invalidation but a new hash
    _hash_memo: dict[Fields, int] = field(default_factory=dict, repr=False)
    # the same memo keyed by the bare selector values, one per field-width layout (the table's): a lookup
    # then builds no (value, width) pairs; a pure function of the values too, so it needs no invalidation
    _value_memos: dict[tuple[int, ...], dict[tuple[int, ...], int]] = field(default_factory=dict, repr=False)
    down_ports: set[int] = field(default_factory=set)  # shared with DeviceState.down_ports

    @property
    def with_selector(self) -> bool:
        return self.hash_spec is not None

    def set_hash(self, spec: HashSpec) -> None:
        """Set the selector hash (compiler side: P4Info does not carry it)."""
        self.generation += 1
        changes.WRITES.n += 1
        self.hash_spec = spec
        self._hasher = make_hasher(spec.algo, spec.crc_config)
        self._hash_memo = {}
        self._value_memos = {}

    # ---------------------------------------------------------------------------------- members

    def _check_call(self, call: ActionCall) -> None:
        info = self.actions.get(call.action)
        if info is None:
            raise invalid(f"action {call.action!r} is not an action of the tables of {self.name}")
        info.check(call)

    @staticmethod
    def _check_id(what: str, i: int) -> None:
        if not isinstance(i, int) or i <= 0 or i >> 32:
            raise invalid(f"{what} id {i!r} must be a non-zero uint32")

    def insert_member(self, member_id: int, call: ActionCall) -> None:
        self.generation += 1
        changes.WRITES.n += 1
        self._check_id("member", member_id)
        self._check_call(call)
        if member_id in self.members:
            raise RuntimeOpError("ALREADY_EXISTS", f"{self.name}: member {member_id} exists")
        if self.size and len(self.members) >= self.size:
            raise RuntimeOpError("RESOURCE_EXHAUSTED", f"{self.name}: {self.size} members already")
        self.members[member_id] = call
        used = set(self._handles.values())
        self._handles[member_id] = next(h for h in range(len(used) + 1) if h not in used)

    def modify_member(self, member_id: int, call: ActionCall) -> None:
        self.generation += 1
        changes.WRITES.n += 1
        self._check_call(call)
        self.require_member(member_id)
        self.members[member_id] = call

    def delete_member(self, member_id: int) -> None:
        self.generation += 1
        changes.WRITES.n += 1
        self.require_member(member_id)
        if self._member_refs.get(member_id):
            raise RuntimeOpError("FAILED_PRECONDITION",
                                 f"{self.name}: member {member_id} is still used by a group or an entry")
        del self.members[member_id]
        del self._handles[member_id]

    def require_member(self, member_id: int) -> None:
        if member_id not in self.members:
            raise RuntimeOpError("NOT_FOUND", f"{self.name}: no member {member_id}")

    # ----------------------------------------------------------------------------------- groups

    def _build_group(self, group_id: int, members: Iterable[tuple[int, int]] | dict[int, int],
                     max_size: int, watch: dict[int, int] | None = None,
                     legacy_watch: Iterable[int] = ()) -> Group:
        """The group as given, checked (in the order the P4Runtime server reports): max_size, then
        per member existence, repetition and weight, then the group's size."""
        if not self.with_selector:
            raise invalid(f"{self.name} is an action profile without selector: no groups")
        if max_size < 0 or (self.max_group_size and max_size > self.max_group_size):
            raise invalid(f"{self.name}: group max_size {max_size} exceeds max_group_size "
                          f"{self.max_group_size}")
        pairs = list(members.items()) if isinstance(members, dict) else list(members)
        seen: dict[int, int] = {}
        for mid, weight in pairs:
            self.require_member(mid)
            if mid in seen:
                raise invalid(f"{self.name}: member {mid} listed twice in group {group_id}")
            if not isinstance(weight, int) or weight < 1:
                raise invalid(f"{self.name}: member {mid} weight {weight!r} must be >= 1")
            seen[mid] = weight
        used = len(seen) if self.sum_of_members else sum(seen.values())
        limit = max_size or self.max_group_size
        if limit and used > limit:
            raise RuntimeOpError("RESOURCE_EXHAUSTED",
                                 f"{self.name}: group {group_id} size {used} exceeds {limit}")
        watch = dict(watch or {})
        for mid, port in watch.items():
            if mid not in seen:
                raise invalid(f"{self.name}: watch port given for member {mid}, not in group {group_id}")
            if not isinstance(port, int) or port < 0 or port >> 9:
                raise invalid(f"{self.name}: watch port {port!r} is not a v1model port")
        g = Group(group_id, seen, max_size, (), watch, tuple(sorted(seen, key=self._handles.__getitem__)),
                  frozenset(legacy_watch) & frozenset(watch))
        self._set_live(g)
        return g

    def _set_live(self, g: Group) -> None:
        self.generation += 1
        changes.WRITES.n += 1
        down = self.down_ports
        g.expanded = tuple(mid for mid in g.order if g.watch.get(mid) not in down
                           for _ in range(g.members[mid]))

    def port_status_changed(self, port: int) -> None:
        """Recompute the live members of the groups watching ``port`` (``down_ports`` already updated)."""
        for g in self.groups.values():
            if port in g.watch.values():
                self._set_live(g)

    def _check_total(self, replacing: int | None, new: Group) -> None:
        """Selector ``size``: total over all groups (weights or members, as P4Info says)."""
        if not self.size:
            return

        def cost(g: Group) -> int:
            return len(g.members) if self.sum_of_members else sum(g.members.values())

        total = sum(cost(g) for gid, g in self.groups.items() if gid != replacing) + cost(new)
        if total > self.size:
            raise RuntimeOpError("RESOURCE_EXHAUSTED", f"{self.name}: selector size {self.size} exceeded")

    def insert_group(self, group_id: int, members: Iterable[tuple[int, int]] | dict[int, int] = (),
                     max_size: int = 0, watch_ports: dict[int, int] | None = None,
                     legacy_watch: Iterable[int] = ()) -> None:
        self.generation += 1
        changes.WRITES.n += 1
        self._check_id("group", group_id)
        if not self.with_selector:
            raise invalid(f"{self.name} is an action profile without selector: no groups")
        if group_id in self.groups:
            raise RuntimeOpError("ALREADY_EXISTS", f"{self.name}: group {group_id} exists")
        g = self._build_group(group_id, members, max_size, watch_ports, legacy_watch)
        self._check_total(None, g)
        self.groups[group_id] = g
        for mid in g.members:
            self.ref_member(mid, +1)

    def modify_group(self, group_id: int, members: Iterable[tuple[int, int]] | dict[int, int] = (),
                     max_size: int | None = None, watch_ports: dict[int, int] | None = None,
                     legacy_watch: Iterable[int] = ()) -> None:
        self.generation += 1
        changes.WRITES.n += 1
        self.require_group(group_id)
        old = self.groups[group_id]
        if max_size is not None and self.max_group_size and max_size > self.max_group_size:
            raise invalid(f"{self.name}: group max_size {max_size} exceeds max_group_size "
                          f"{self.max_group_size}")
        if max_size is not None and max_size != old.max_size:
            raise invalid(f"{self.name}: group {group_id} max_size cannot change ({old.max_size} -> {max_size})")
        g = self._build_group(group_id, members, old.max_size, watch_ports, legacy_watch)
        self._check_total(group_id, g)
        for mid in g.members:
            self.ref_member(mid, +1)
        for mid in old.members:
            self.ref_member(mid, -1)
        self.groups[group_id] = g

    def delete_group(self, group_id: int) -> None:
        self.generation += 1
        changes.WRITES.n += 1
        self.require_group(group_id)
        if self._group_refs.get(group_id):
            raise RuntimeOpError("FAILED_PRECONDITION", f"{self.name}: group {group_id} is used by an entry")
        for mid in self.groups.pop(group_id).members:
            self.ref_member(mid, -1)

    def require_group(self, group_id: int) -> None:
        if group_id not in self.groups:
            raise RuntimeOpError("NOT_FOUND", f"{self.name}: no group {group_id}")

    # ---------------------------------------------------------------------------- bookkeeping

    def ref_member(self, member_id: int, delta: int) -> None:
        self._member_refs[member_id] = self._member_refs.get(member_id, 0) + delta

    def ref_group(self, group_id: int, delta: int) -> None:
        self._group_refs[group_id] = self._group_refs.get(group_id, 0) + delta

    def reset(self) -> None:
        self.generation += 1
        changes.WRITES.n += 1
        self.members.clear()
        self.groups.clear()
        self._handles.clear()
        self._member_refs.clear()
        self._group_refs.clear()

    # -------------------------------------------------------------------------------- selection

    def select_member(self, group_id: int, fields: Sequence[tuple[int, int]]) -> int | None:
        """The member id BMv2 would pick for these selector ``(value, width)`` fields."""
        g = self.groups[group_id]
        n = len(g.expanded)
        if n == 0:
            return None
        if n == 1:
            return g.expanded[0]
        if type(fields) is not tuple:
            fields = tuple((value, width) for value, width in fields)
        memo = self._hash_memo
        h = memo.get(fields)
        if h is None:
            hasher = self._hasher
            if hasher is None:
                self.set_hash(self.hash_spec or HashSpec())
                hasher = self._hasher
                memo = self._hash_memo
            h = hasher(fields)  # type: ignore[misc]
            if len(memo) >= HASH_MEMO_MAX:  # flows repeat; a bounded memo of recent ones is enough
                memo.clear()
            memo[fields] = h
        return g.expanded[h % n]

    def select_values(self, group_id: int, values: tuple[int, ...], widths: tuple[int, ...]) -> ActionCall | None:
        """:meth:`select` for the table's data path: selector ``values`` and their ``widths`` apart (the widths
        are the table's constant layout). Same member as ``select(group_id, zip(values, widths))``; the live
        members are read per call, so watch-port changes and group writes take effect at once."""
        g = self.groups[group_id]
        expanded = g.expanded
        n = len(expanded)
        if n == 0:
            return None
        if n == 1:
            return self.members[expanded[0]]
        memo = self._value_memos.get(widths)
        if memo is None:
            if self._hasher is None:
                self.set_hash(self.hash_spec or HashSpec())
            memo = self._value_memos[widths] = {}
        h = memo.get(values)
        if h is None:
            h = self._hasher(tuple(zip(values, widths, strict=True)))  # type: ignore[misc]
            if len(memo) >= HASH_MEMO_MAX:
                memo.clear()
            memo[values] = h
        return self.members[expanded[h % n]]

    def select(self, group_id: int, fields: Sequence[tuple[int, int]]) -> ActionCall | None:
        mid = self.select_member(group_id, fields)
        return None if mid is None else self.members[mid]
