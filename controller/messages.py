"""P4Runtime message helpers shared by the client and the fabric application: election ids, entity
wrapping, Write error details, and the p4exec queue extern (port liveness and queue settings)."""

from __future__ import annotations

from typing import Any

import grpc
from google.protobuf import struct_pb2
from google.rpc import status_pb2
from p4.v1 import p4runtime_pb2 as pb

from controller.errors import UpdateError, WriteError

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
