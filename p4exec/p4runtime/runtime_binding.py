"""The runtime half of the seam: mirror accepted writes into `p4exec.runtime` objects and read
live data-plane values (counters, registers, direct counters, digests) back from them.

Names of runtime classes and methods appear only here and in the device layer (`p4exec.device`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from p4exec import runtime
from p4exec.device.program import Program
from p4exec.entry_codec import BY_RUNTIME, KINDS, fill
from p4exec.p4runtime.codec import decode, encode
from p4exec.p4runtime.errors import P4RuntimeError, from_runtime
from p4exec.runtime import RuntimeOpError

U = p4runtime_pb2.Update


def call(fn, *args, **kwargs):
    """Run a runtime operation, mapping RuntimeOpError to the server's error."""
    try:
        return fn(*args, **kwargs)
    except RuntimeOpError as exc:
        raise from_runtime(exc) from None


class Binding:
    """Applies accepted writes to the runtime objects of one program."""

    def __init__(self, program: Program) -> None:
        self.state = program.state
        self.p4info = program.p4info
        self._actions = {a.preamble.id: a for a in program.p4info.actions}
        self._action_by_name = {a.preamble.name: a for a in program.p4info.actions}

    def _obj(self, kind: str, name: str) -> Any:
        if self.state is None:
            return None
        return getattr(self.state, kind, {}).get(name)

    # tables
    def action_call(self, action: p4runtime_pb2.Action) -> Any:
        info = self._actions[action.action_id]
        given = {p.param_id: p.value for p in action.params}
        args = tuple(decode(given[p.id], p.bitwidth, p.name) for p in info.params)
        return runtime.ActionCall(info.preamble.name, args)

    def table(self, table: p4info_pb2.Table) -> Any:
        """The runtime table: the one store of the table's entries."""
        obj = self._obj("tables", table.preamble.name)
        if obj is None:
            raise P4RuntimeError("INTERNAL", f"table {table.preamble.name!r} has no runtime state")
        return obj

    def runtime_match(self, table: p4info_pb2.Table, matches) -> tuple:
        """Runtime form of canonical field matches (one item per P4Info match field, None: don't care)."""
        by_field = {m.field_id: m for m in matches}
        return tuple(None if by_field.get(mf.id) is None else _field_match(runtime, mf, by_field[mf.id])
                     for mf in table.match_fields)

    def find(self, table: p4info_pb2.Table, entry: p4runtime_pb2.TableEntry) -> Any:
        """The runtime entry with the canonical `entry`'s match and priority, or None."""
        return self.table(table).get(self.runtime_match(table, entry.match), entry.priority)

    def entry_proto(self, table: p4info_pb2.Table, e: Any) -> p4runtime_pb2.TableEntry:
        """Canonical protobuf form of a runtime entry (what Read returns): matches by field id,
        parameters by id, byte strings shortest, and the echoed fields as written."""
        out = p4runtime_pb2.TableEntry(table_id=table.preamble.id, priority=e.priority,
                                       controller_metadata=e.controller_metadata,
                                       idle_timeout_ns=e.idle_timeout_ns, metadata=e.metadata,
                                       is_const=bool(e.is_const))
        matches = [(mf.id, _field_match_proto(mf, fm))
                   for mf, fm in zip(table.match_fields, e.match, strict=False) if fm is not None]
        matches.sort(key=_first)
        out.match.extend(fm for _, fm in matches)
        if e.action is not None:
            action = self.action_proto(e.action)
            if action is not None:
                out.action.action.CopyFrom(action)
        elif e.member_id is not None:
            out.action.action_profile_member_id = e.member_id
        elif e.group_id is not None:
            out.action.action_profile_group_id = e.group_id
        return out

    def runtime_entry(self, table: p4info_pb2.Table, entry: p4runtime_pb2.TableEntry) -> Any:
        match = self.runtime_match(table, entry.match)
        kind = entry.action.WhichOneof("type")
        kwargs: dict[str, Any] = {"priority": entry.priority, "idle_timeout_ns": entry.idle_timeout_ns,
                                  "metadata": bytes(entry.metadata),
                                  "controller_metadata": entry.controller_metadata}
        if kind == "action":
            kwargs["action"] = self.action_call(entry.action.action)
        elif kind == "action_profile_member_id":
            kwargs["member_id"] = entry.action.action_profile_member_id
        elif kind == "action_profile_group_id":
            kwargs["group_id"] = entry.action.action_profile_group_id
        return runtime.TableEntry(match=match, **kwargs)

    def action_proto(self, call: Any) -> p4runtime_pb2.Action | None:
        """Protobuf form (canonical bytes) of a runtime ActionCall."""
        info = self._action_by_name.get(call.action)
        if info is None:
            return None
        out = p4runtime_pb2.Action(action_id=info.preamble.id)
        for pid, value in sorted((p.id, v) for p, v in zip(info.params, call.args, strict=False)):
            out.params.add(param_id=pid, value=encode(value))
        return out

    def current_default(self, table: p4info_pb2.Table) -> p4runtime_pb2.Action | None:
        obj = self._obj("tables", table.preamble.name)
        call_ = getattr(obj, "default_action", None)
        return None if call_ is None else self.action_proto(call_)

    def table_write(self, table: p4info_pb2.Table, update_type: int, entry: p4runtime_pb2.TableEntry) -> Any:
        """Insert, modify or delete in the runtime table; the runtime entry concerned."""
        obj = self.table(table)
        rentry = self.runtime_entry(table, entry)
        op = {U.INSERT: obj.insert, U.MODIFY: obj.modify, U.DELETE: obj.delete}[update_type]
        return call(op, rentry)

    def default_changed(self, table: p4info_pb2.Table) -> bool:
        """Has the controller set the table's default action (not reset since)?"""
        obj = self._obj("tables", table.preamble.name)
        return obj is not None and obj.default_changed

    def table_default(self, table: p4info_pb2.Table, action: p4runtime_pb2.Action | None) -> None:
        obj = self._obj("tables", table.preamble.name)
        if obj is None:
            return
        if action is None:
            reset = getattr(obj, "reset_default", None)
            if reset is not None:
                call(reset)
                return
            action = p4runtime_pb2.Action(action_id=table.initial_default_action.action_id or
                                          table.const_default_action_id)
            for i, arg in enumerate(table.initial_default_action.arguments):
                action.params.add(param_id=arg.param_id or i + 1, value=arg.value)
            if not action.action_id:
                return
        call(obj.set_default, self.action_call(action))

    # indexed externs
    def counter_read(self, name: str, index: int) -> tuple[int, int] | None:
        """(byte_count, packet_count); the runtime counts (packets, bytes)."""
        obj = self._obj("counters", name)
        if obj is None:
            return None
        packets, nbytes = call(obj.read, index)
        return nbytes, packets

    def counter_write(self, name: str, index: int, byte_count: int, packet_count: int) -> bool:
        obj = self._obj("counters", name)
        if obj is None:
            return False
        call(obj.write, index, packet_count, byte_count)
        return True

    def register_read(self, name: str, index: int) -> int | None:
        obj = self._obj("registers", name)
        return None if obj is None else call(obj.read, index)

    def register_write(self, name: str, index: int, value: int) -> bool:
        obj = self._obj("registers", name)
        if obj is None:
            return False
        call(obj.write, index, value)
        return True

    def meter_set(self, name: str, index: int, cfg: p4runtime_pb2.MeterConfig | None) -> None:
        obj = self._obj("meters", name)
        if obj is None:
            return
        if cfg is None:
            call(obj.clear_config, index)
        else:
            call(obj.set_config, index, cfg.cir, cfg.cburst, cfg.pir, cfg.pburst)

    def direct_meter_set(self, table, rentry, cfg: p4runtime_pb2.MeterConfig | None) -> None:
        """Configure (None: unconfigure, all green) the direct meter cell of a runtime entry."""
        meter = None
        for dm in (getattr(self.state, "direct_meters", None) or {}).values():
            if dm.table == table.preamble.name:
                meter = dm
        if meter is None:
            return
        if cfg is None:
            if rentry.meter is not None:
                rentry.meter.configure(None)
        else:
            call(meter.set_config, rentry, cfg.cir, cfg.cburst, cfg.pir, cfg.pburst)

    @staticmethod
    def direct_meter_config(rentry) -> p4runtime_pb2.MeterConfig | None:
        """The direct meter configuration of a runtime entry, as Read returns it (None: unset)."""
        cfg = rentry.meter.config if rentry.meter is not None else None
        if cfg is None:
            return None
        return p4runtime_pb2.MeterConfig(cir=cfg.cir, cburst=cfg.cburst, pir=cfg.pir, pburst=cfg.pburst)

    def value_set_write(self, info, members: list[list[p4runtime_pb2.FieldMatch]]) -> None:
        obj = self._obj("value_sets", info.preamble.name)
        if obj is None:
            return
        rows = []
        for match in members:
            by_field = {m.field_id: m for m in match}
            rows.append(tuple(None if by_field.get(mf.id) is None
                              else _field_match(runtime, mf, by_field[mf.id]) for mf in info.match))
        obj.members[:] = rows

    def digest_config(self, name: str, cfg) -> None:
        obj = self._obj("digests", name)
        if obj is not None:
            obj.config = cfg

    # action profiles: the runtime profile is the one store of members and groups
    def profile(self, name: str) -> Any:
        obj = self._obj("action_profiles", name)
        if obj is None:
            raise P4RuntimeError("INTERNAL", f"action profile {name!r} has no runtime state")
        return obj

    def member_write(self, profile: str, update_type: int,
                     member: p4runtime_pb2.ActionProfileMember) -> None:
        obj = self.profile(profile)
        if update_type == U.DELETE:
            call(obj.delete_member, member.member_id)
        elif update_type == U.INSERT:
            call(obj.insert_member, member.member_id, self.action_call(member.action))
        else:
            call(obj.modify_member, member.member_id, self.action_call(member.action))

    def group_write(self, profile: str, update_type: int,
                    group: p4runtime_pb2.ActionProfileGroup) -> None:
        obj = self.profile(profile)
        members = [(m.member_id, m.weight) for m in group.members]
        watch = {}
        legacy = []
        for m in group.members:
            kind = m.WhichOneof("watch_kind")
            if kind == "watch_port" and m.watch_port:
                watch[m.member_id] = int.from_bytes(m.watch_port, "big")
            elif kind == "watch" and m.watch:
                watch[m.member_id] = m.watch
                legacy.append(m.member_id)
        if update_type == U.DELETE:
            call(obj.delete_group, group.group_id)
        elif update_type == U.INSERT:
            call(obj.insert_group, group.group_id, members, group.max_size, watch, legacy)
        else:
            call(obj.modify_group, group.group_id, members, group.max_size, watch, legacy)

    def member_protos(self, ap_id: int, profile: str) -> Iterator[p4runtime_pb2.ActionProfileMember]:
        """The profile's members as P4Runtime messages (canonical bytes), in the order written."""
        for mid, action in self.profile(profile).members.items():
            out = p4runtime_pb2.ActionProfileMember(action_profile_id=ap_id, member_id=mid)
            proto = self.action_proto(action)
            if proto is not None:
                out.action.CopyFrom(proto)
            yield out

    def group_protos(self, ap_id: int, profile: str) -> Iterator[p4runtime_pb2.ActionProfileGroup]:
        """The profile's groups as P4Runtime messages: members in the order given, with their weights
        and watch ports (in the field they were written in)."""
        for gid, g in self.profile(profile).groups.items():
            out = p4runtime_pb2.ActionProfileGroup(action_profile_id=ap_id, group_id=gid, max_size=g.max_size)
            for mid, weight in g.members.items():
                m = out.members.add(member_id=mid, weight=weight)
                port = g.watch.get(mid)
                if port is None:
                    continue
                if mid in g.legacy_watch:
                    m.watch = port
                else:
                    m.watch_port = encode(port)
            yield out

    # packet replication engine
    def mcast_write(self, update_type: int, entry: p4runtime_pb2.MulticastGroupEntry) -> None:
        pre = getattr(self.state, "pre", None)
        if pre is None:
            return
        gid = entry.multicast_group_id
        if update_type == U.DELETE:
            call(pre.delete_group, gid)
            return
        replicas = [(_replica_port(r), r.instance) for r in entry.replicas]
        call(pre.insert_group if update_type == U.INSERT else pre.modify_group, gid, replicas)

    def clone_write(self, update_type: int, entry: p4runtime_pb2.CloneSessionEntry) -> None:
        pre = getattr(self.state, "pre", None)
        if pre is None:
            return
        sid = entry.session_id
        if update_type == U.DELETE:
            call(pre.delete_session, sid)
            return
        session = runtime.CloneSession(
            sid, tuple((_replica_port(r), r.instance) for r in entry.replicas),
            entry.class_of_service, entry.packet_length_bytes)
        call(pre.insert_session if update_type == U.INSERT else pre.modify_session, session)

    # digests emitted by the data plane
    def drain_digests(self) -> list[tuple[int, tuple[int, ...]]]:
        out: list[tuple[int, tuple[int, ...]]] = []
        for d in (getattr(self.state, "digests", None) or {}).values():
            if d.pending:
                out.extend((d.id, values) for values in d.drain())
        return out


def _first(item: tuple) -> int:
    return item[0]


def _replica_port(replica: p4runtime_pb2.Replica) -> int:
    if replica.WhichOneof("port_kind") == "port":
        return int.from_bytes(replica.port, "big")
    return replica.egress_port


def _field_match_proto(mf: p4info_pb2.MatchField, fm: Any) -> p4runtime_pb2.FieldMatch:
    kind = BY_RUNTIME[type(fm).__name__]
    return fill(p4runtime_pb2.FieldMatch(), mf.id, kind, tuple(getattr(fm, name) for name in kind.values))


def _field_match(runtime: Any, mf: p4info_pb2.MatchField, fm: p4runtime_pb2.FieldMatch) -> Any:
    """A canonical (already checked) field match as a runtime match object."""
    kind = KINDS[fm.WhichOneof("field_match_type")]
    sub = getattr(fm, kind.name)
    values = [getattr(sub, name) if i and kind.length_second else decode(getattr(sub, name), mf.bitwidth, mf.name)
              for i, name in enumerate(kind.values)]
    return getattr(runtime, kind.runtime)(*values)
