"""What the controller wrote, in canonical protobuf form, per committed pipeline.

Reads are answered from here (plus live data-plane values fetched from the
runtime: counters, registers), so Read returns exactly what Write accepted.
A fresh store comes with every committed pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from p4.v1 import p4runtime_pb2

from p4exec.p4runtime.translate import EntryKey
from p4exec.p4runtime.wire import encode_entry

_MISSING = object()


class EntryMap(dict):
    """key -> canonical TableEntry of one table; the fast path stores the entry's canonical parts
    (a tuple, see fastpath.py), which become a message when first read (most written entries are
    never read back)."""

    def raw(self, key: EntryKey):
        return dict.__getitem__(self, key)

    def _msg(self, key: EntryKey, value) -> p4runtime_pb2.TableEntry:
        if type(value) is tuple:
            value = p4runtime_pb2.TableEntry.FromString(encode_entry(*value))
            dict.__setitem__(self, key, value)
        return value

    def __getitem__(self, key: EntryKey) -> p4runtime_pb2.TableEntry:
        return self._msg(key, dict.__getitem__(self, key))

    def get(self, key, default=None):
        value = dict.get(self, key, _MISSING)
        return default if value is _MISSING else self._msg(key, value)

    def values(self):  # type: ignore[override]
        return [self._msg(k, v) for k, v in dict.items(self)]

    def items(self):  # type: ignore[override]
        return [(k, self._msg(k, v)) for k, v in dict.items(self)]


@dataclass
class Store:
    # table_id -> key -> canonical TableEntry (insertion order kept for reads)
    tables: dict[int, EntryMap] = field(default_factory=dict)
    # table_id -> canonical default action (absent: the P4Info's initial default action)
    defaults: dict[int, p4runtime_pb2.Action] = field(default_factory=dict)
    # action profile id -> member id -> ActionProfileMember
    members: dict[int, dict[int, p4runtime_pb2.ActionProfileMember]] = field(default_factory=dict)
    groups: dict[int, dict[int, p4runtime_pb2.ActionProfileGroup]] = field(default_factory=dict)
    mcast: dict[int, p4runtime_pb2.MulticastGroupEntry] = field(default_factory=dict)
    clones: dict[int, p4runtime_pb2.CloneSessionEntry] = field(default_factory=dict)
    digests: dict[int, p4runtime_pb2.DigestEntry.Config] = field(default_factory=dict)
    value_sets: dict[int, p4runtime_pb2.ValueSetEntry] = field(default_factory=dict)
    # (meter id, index) / (table id, entry key) -> MeterConfig, for reads
    meters: dict[tuple[int, int], p4runtime_pb2.MeterConfig] = field(default_factory=dict)
    direct_meters: dict[tuple[int, EntryKey], p4runtime_pb2.MeterConfig] = field(default_factory=dict)
    # Fallbacks when the pipeline has no runtime object for the resource (control-only pipelines).
    counters: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)
    direct_counters: dict[tuple[int, EntryKey], tuple[int, int]] = field(default_factory=dict)
    registers: dict[tuple[int, int], int] = field(default_factory=dict)

    def table(self, table_id: int) -> EntryMap:
        entries = self.tables.get(table_id)
        if entries is None:
            entries = self.tables[table_id] = EntryMap()
        return entries

    def member_users(self, ap_id: int, member_id: int) -> bool:
        """Is the member referenced by a group or a table entry? (then it cannot be deleted)"""
        for group in self.groups.get(ap_id, {}).values():
            if any(m.member_id == member_id for m in group.members):
                return True
        return self._entries_using(ap_id, "action_profile_member_id", member_id)

    def group_users(self, ap_id: int, group_id: int) -> bool:
        return self._entries_using(ap_id, "action_profile_group_id", group_id)

    def _entries_using(self, ap_id: int, kind: str, ref: int) -> bool:
        for table_id, entries in self.tables.items():
            if self.table_profile.get(table_id) != ap_id:
                continue
            for entry in entries.values():
                if entry.action.WhichOneof("type") == kind and getattr(entry.action, kind) == ref:
                    return True
        return False

    # (table id, entry key) -> oneshot.Realized: the hidden group behind a one-shot entry
    oneshots: dict = field(default_factory=dict)
    # table id -> its action profile id; filled by the pipeline when it is built
    table_profile: dict[int, int] = field(default_factory=dict)
