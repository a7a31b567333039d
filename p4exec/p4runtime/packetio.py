"""PacketOut/PacketIn <-> frames on the CPU port, via the @controller_header metadata.

As on BMv2, the metadata travels as a header in front of the payload: the
server packs `packet_out` fields before injecting a frame on the CPU port, and
strips and decodes the `packet_in` header from frames the program sends there.
"""

from __future__ import annotations

from p4.v1 import p4runtime_pb2

from p4exec.p4runtime.codec import decode, encode, pack_fields, unpack_fields
from p4exec.p4runtime.errors import invalid
from p4exec.p4runtime.p4info_index import P4InfoIndex


def packet_out_frame(index: P4InfoIndex, msg: p4runtime_pb2.PacketOut) -> bytes:
    """The frame to inject on the CPU port for a PacketOut (controller header + payload)."""
    fields = index.packet_metadata("packet_out")
    by_id = {m.id: m for m in fields}
    given: dict[int, int] = {}
    for md in msg.metadata:
        info = by_id.get(md.metadata_id)
        if info is None:
            raise invalid(f"packet_out has no metadata id {md.metadata_id}")
        if md.metadata_id in given:
            raise invalid(f"packet_out metadata {info.name!r} given twice")
        given[md.metadata_id] = decode(md.value, info.bitwidth, f"packet_out metadata {info.name!r}")
    missing = [m.name for m in fields if m.id not in given]
    if missing:
        raise invalid(f"packet_out metadata missing: {missing}")
    header = pack_fields([(given[m.id], m.bitwidth) for m in fields]) if fields else b""
    return header + bytes(msg.payload)


def packet_in_message(index: P4InfoIndex, frame: bytes) -> p4runtime_pb2.PacketIn | None:
    """PacketIn for a frame egressing on the CPU port, or None if it is too short."""
    fields = index.packet_metadata("packet_in")
    msg = p4runtime_pb2.PacketIn()
    if not fields:
        msg.payload = frame
        return msg
    unpacked = unpack_fields(frame, [m.bitwidth for m in fields])
    if unpacked is None:
        return None
    values, payload = unpacked
    for info, value in zip(fields, values, strict=True):
        msg.metadata.add(metadata_id=info.id, value=encode(value))
    msg.payload = payload
    return msg
