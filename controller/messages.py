"""P4Runtime message helpers shared by the client and the fabric application: election ids, entity
wrapping, Write error details, and the p4exec queue extern (port liveness and queue settings)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import grpc
from google.protobuf import struct_pb2
from google.rpc import status_pb2
from p4.v1 import p4runtime_pb2 as pb

from controller.errors import ControllerError, UpdateError, WriteError
from p4exec.entry_codec import KINDS, field_number, varint, wire_keys

P4EXEC_QUEUE_EXTERN = 0x81  # docs/architecture.md: the queue extern of p4exec switches


def election(election_id: int) -> pb.Uint128:
    return pb.Uint128(high=election_id >> 64, low=election_id & ((1 << 64) - 1))


def parse_write_error(err: grpc.RpcError) -> WriteError:
    """Unpack the per-update `p4.v1.Error`s that the spec puts in the status details of a failed Write."""
    failures: list[UpdateError] = []
    for key, value in err.trailing_metadata() or ():
        if key != "grpc-status-details-bin":
            continue
        status = status_pb2.Status.FromString(value)
        for index, detail in enumerate(status.details):
            p4_error = pb.Error()
            if detail.Unpack(p4_error) and p4_error.canonical_code != 0:
                code = grpc.StatusCode(_code_tuple(p4_error.canonical_code)).name
                failures.append(UpdateError(index, code, p4_error.message))
    return WriteError(err.code(), err.details() or "", failures)


def _code_tuple(number: int) -> tuple[int, str]:
    for code in grpc.StatusCode:
        if code.value[0] == number:
            return code.value
    return grpc.StatusCode.UNKNOWN.value




_ENTITY_FIELDS = {
    pb.TableEntry: "table_entry", pb.ActionProfileMember: "action_profile_member",
    pb.ActionProfileGroup: "action_profile_group", pb.CounterEntry: "counter_entry",
    pb.DirectCounterEntry: "direct_counter_entry", pb.MeterEntry: "meter_entry",
    pb.DirectMeterEntry: "direct_meter_entry", pb.RegisterEntry: "register_entry",
    pb.PacketReplicationEngineEntry: "packet_replication_engine_entry", pb.DigestEntry: "digest_entry",
    pb.ValueSetEntry: "value_set_entry", pb.ExternEntry: "extern_entry",
}


def as_entity(obj: Any) -> pb.Entity:
    """Wrap any P4Runtime entity message (or pass an Entity through)."""
    if isinstance(obj, pb.Entity):
        return obj
    field = _ENTITY_FIELDS.get(type(obj))
    if field is None:
        raise TypeError(f"not a P4Runtime entity: {type(obj).__name__}")
    entity = pb.Entity()
    getattr(entity, field).CopyFrom(obj)
    return entity


def queue_extern(port: int = 0, **settings: float) -> pb.ExternEntry:
    """The queue extern entry of one egress port (0 = every port, for reads) with optional settings."""
    entry = pb.ExternEntry(extern_type_id=P4EXEC_QUEUE_EXTERN, extern_id=port)
    if settings:
        body = struct_pb2.Struct()
        body.update(settings)
        entry.entry.Pack(body)
    return entry


def unpack_queue_extern(entry: pb.ExternEntry) -> dict[str, Any]:
    body = struct_pb2.Struct()
    entry.entry.Unpack(body)
    return dict(body.items())


# ---- updates as bytes ------------------------------------------------------------------------------------
# A fabric writes tens of thousands of table entries; with the pure-Python protobuf runtime building and
# serializing an Update costs far more than the switch needs to apply it. `TableEntryEncoder` writes the
# wire format directly (field numbers from the p4runtime descriptors, as the server's p4exec/p4runtime/wire.py
# reads them) and gives the same bytes as `Update.SerializeToString()` of the equal message.


def _key(msg: Any, name: str, wire_type: int) -> bytes:
    return varint(field_number(msg, name) << 3 | wire_type)


def _len(key: bytes, body: bytes) -> bytes:
    """A length-delimited field: key, length, body."""
    n = len(body)
    return key + (bytes([n]) if n < 0x80 else varint(n)) + body


_VARINT, _LEN = 0, 2
_UPDATE_TYPE, _UPDATE_ENTITY = _key(pb.Update, "type", _VARINT), _key(pb.Update, "entity", _LEN)
_ENTITY_TABLE_ENTRY = _key(pb.Entity, "table_entry", _LEN)
_TE_TABLE_ID, _TE_MATCH = _key(pb.TableEntry, "table_id", _VARINT), _key(pb.TableEntry, "match", _LEN)
_TE_ACTION, _TE_PRIORITY = _key(pb.TableEntry, "action", _LEN), _key(pb.TableEntry, "priority", _VARINT)
_TE_DEFAULT = _key(pb.TableEntry, "is_default_action", _VARINT)
_FM_FIELD_ID = _key(pb.FieldMatch, "field_id", _VARINT)
_TA_ACTION = _key(pb.TableAction, "action", _LEN)
_TA_MEMBER = _key(pb.TableAction, "action_profile_member_id", _VARINT)
_TA_GROUP = _key(pb.TableAction, "action_profile_group_id", _VARINT)
_ACTION_ID, _ACTION_PARAM = _key(pb.Action, "action_id", _VARINT), _key(pb.Action, "params", _LEN)
_PARAM_ID, _PARAM_VALUE = _key(pb.Action.Param, "param_id", _VARINT), _key(pb.Action.Param, "value", _LEN)
# TableEntry fields are serialized in field-number order, as the protobuf runtime does
assert field_number(pb.TableEntry, "table_id") < field_number(pb.TableEntry, "match") < field_number(pb.TableEntry, "action") \
    < field_number(pb.TableEntry, "priority") < field_number(pb.TableEntry, "is_default_action")
assert field_number(pb.Action.Param, "param_id") < field_number(pb.Action.Param, "value")


class EncodedUpdate:
    """A serialized `p4.v1.Update` (what `SwitchConnection.write` sends as it is). `type` and `entity`
    decode it, for the rare reader (reconciliation, tests); the write path never does."""

    __slots__ = ("raw",)

    def __init__(self, raw: bytes) -> None:
        self.raw = raw

    @property
    def message(self) -> pb.Update:
        return pb.Update.FromString(self.raw)

    @property
    def type(self) -> int:
        return int(self.message.type)

    @property
    def entity(self) -> pb.Entity:
        return self.message.entity

    def SerializeToString(self) -> bytes:  # noqa: N802 - the protobuf name, so both kinds serialize alike
        return self.raw

    def __eq__(self, other: object) -> bool:
        if isinstance(other, EncodedUpdate):
            return self.raw == other.raw
        return isinstance(other, pb.Update) and other.SerializeToString() == self.raw

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"EncodedUpdate({self.message})"


UpdateLike = pb.Update | EncodedUpdate


class ParamEncoder(Protocol):
    def __call__(self, value: Any, bitwidth: int) -> bytes: ...


@dataclass(frozen=True)
class FieldSpec:
    field_id: int
    kind: str  # exact, lpm, ternary, range, optional (p4exec/entry_codec.py)
    bitwidth: int
    head: bytes = b""  # the FieldMatch's field_id, encoded
    keys: tuple[bytes, bytes, bytes] = (b"", b"", b"")  # the kind's oneof key and its values' keys
    pair: bool = False  # two byte-string values (ternary, range)
    prefix: bool = False  # a value and a prefix length (lpm)

    def __post_init__(self) -> None:
        kind = KINDS[self.kind]
        object.__setattr__(self, "head", _FM_FIELD_ID + varint(self.field_id))
        object.__setattr__(self, "keys", wire_keys(kind))
        object.__setattr__(self, "prefix", kind.length_second)
        object.__setattr__(self, "pair", kind.arity == 2 and not kind.length_second)


ActionSpec = tuple[int, str, list[tuple[str, int, int]]]  # id, full name, [(param name, id, width)] in P4Info order


class ActionEncoder:
    """Serialized `Action`s (of table entries and of action profile members), cheap per call: each action
    name is resolved once (by the given resolver) and then looked up in a dict."""

    def __init__(self, action: Callable[[str], ActionSpec], encode: ParamEncoder) -> None:
        self.actions: dict[str, ActionSpec] = {}
        self._action = action
        self._encode = encode

    def action(self, name: str, params: dict[str, Any]) -> bytes:
        """A serialized `Action`."""
        spec = self.actions.get(name)
        if spec is None:
            spec = self.actions[name] = self._action(name)
        action_id, full_name, specs = spec
        enc = self._encode
        parts = [_ACTION_ID + varint(action_id)]
        for pname, pid, width in specs:
            if pname not in params:
                raise ControllerError(f"action {full_name} needs parameter {pname!r}")
            parts.append(_len(_ACTION_PARAM, _PARAM_ID + varint(pid) + _len(_PARAM_VALUE, enc(params[pname], width))))
        if len(params) != len(specs):
            extra = sorted(str(k) for k in set(params) - {s[0] for s in specs})
            raise ControllerError(f"action {full_name} has no parameter(s) {', '.join(extra)}")
        return b"".join(parts)


class TableEntryEncoder:
    """Serialized updates of one table's entries, cheap per entry: values are encoded and concatenated, no
    protobuf object is made. Names are resolved once each (by the given resolvers: full or short names, as
    the P4Info index allows) and then looked up in a dict. The controller's one table-entry encoder: its
    protobuf form (`SwitchConnection.table_entry`) is parsed from these bytes; the match kinds' layout is
    p4exec/entry_codec.py's, which the server decodes with."""

    def __init__(self, table_id: int, field: Callable[[str], FieldSpec], actions: ActionEncoder,
                 parse_prefix: Callable[[Any, int], tuple[int, int]]) -> None:
        self.head = _TE_TABLE_ID + varint(table_id)
        self.fields: dict[str, FieldSpec] = {}
        self._field = field
        self._actions = actions
        self._encode = actions._encode
        self._prefix = parse_prefix

    def match(self, match: dict[str, Any]) -> bytes:
        enc = self._encode
        out = []
        for name, value in match.items():
            f = self.fields.get(name)
            if f is None:
                f = self.fields[name] = self._field(name)
            oneof, first, second = f.keys
            if f.prefix:
                prefix, length = self._prefix(value, f.bitwidth)
                if length == 0:
                    continue  # spec: a zero-length prefix is expressed by omitting the field
                body = _len(first, enc(prefix, f.bitwidth)) + second + varint(length)
            elif f.pair:
                a, b = value
                body = _len(first, enc(a, f.bitwidth)) + _len(second, enc(b, f.bitwidth))
            else:
                body = _len(first, enc(value, f.bitwidth))
            out.append(_len(_TE_MATCH, f.head + _len(oneof, body)))
        return b"".join(out)

    def update(self, kind: int, match: dict[str, Any] | None = None, action: str | None = None,
               params: dict[str, Any] | None = None, priority: int = 0, default: bool = False,
               member_id: int | None = None, group_id: int | None = None) -> EncodedUpdate:
        body = _len(_ENTITY_TABLE_ENTRY, self.entry(match, action, params, priority, default, member_id, group_id))
        return EncodedUpdate((_UPDATE_TYPE + varint(kind) if kind else b"") + _len(_UPDATE_ENTITY, body))

    def entry(self, match: dict[str, Any] | None = None, action: str | None = None,
              params: dict[str, Any] | None = None, priority: int = 0, default: bool = False,
              member_id: int | None = None, group_id: int | None = None) -> bytes:
        """A serialized `TableEntry`."""
        entry = [self.head, self.match(match) if match else b""]
        if action is not None:
            entry.append(_len(_TE_ACTION, _len(_TA_ACTION, self._actions.action(action, params or {}))))
        elif member_id is not None:
            entry.append(_len(_TE_ACTION, _TA_MEMBER + varint(member_id)))
        elif group_id is not None:
            entry.append(_len(_TE_ACTION, _TA_GROUP + varint(group_id)))
        if priority:
            entry.append(_TE_PRIORITY + varint(priority))
        if default:
            entry.append(_TE_DEFAULT + b"\x01")
        return b"".join(entry)
