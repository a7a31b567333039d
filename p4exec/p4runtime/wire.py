"""Protobuf wire format of Write requests, read directly (the hot path of big table writes).

The pure-Python protobuf runtime (3.20) builds eight message objects per table entry and dominated
batched writes. Here a WriteRequest is split into its updates, and a table entry with a direct action
is read into plain tuples; anything else (other entities, unusual fields) is left as bytes for the
protobuf classes, so the general path stays the only judge of what it does not know.
Field numbers come from the p4runtime descriptors, not from hand-copied constants.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from p4.v1 import p4runtime_pb2 as pb


def _num(msg, name: str) -> int:
    return msg.DESCRIPTOR.fields_by_name[name].number


WR_DEVICE, WR_ROLE_ID, WR_ROLE, WR_ELECTION, WR_UPDATES, WR_ATOMICITY = (
    _num(pb.WriteRequest, n) for n in ("device_id", "role_id", "role", "election_id", "updates", "atomicity"))
U128_HIGH, U128_LOW = _num(pb.Uint128, "high"), _num(pb.Uint128, "low")
UP_TYPE, UP_ENTITY = _num(pb.Update, "type"), _num(pb.Update, "entity")
ENT_TABLE = _num(pb.Entity, "table_entry")
TE_TABLE, TE_MATCH, TE_ACTION, TE_PRIORITY, TE_CMETA, TE_IDLE, TE_META = (
    _num(pb.TableEntry, n) for n in ("table_id", "match", "action", "priority", "controller_metadata",
                                     "idle_timeout_ns", "metadata"))
FM_ID = _num(pb.FieldMatch, "field_id")
# match kind field number -> (kind name, field numbers of its two values (0: none))
FM_KINDS = {
    _num(pb.FieldMatch, "exact"): ("exact", _num(pb.FieldMatch.Exact, "value"), 0),
    _num(pb.FieldMatch, "lpm"): ("lpm", _num(pb.FieldMatch.LPM, "value"), _num(pb.FieldMatch.LPM, "prefix_len")),
    _num(pb.FieldMatch, "ternary"): ("ternary", _num(pb.FieldMatch.Ternary, "value"),
                                     _num(pb.FieldMatch.Ternary, "mask")),
    _num(pb.FieldMatch, "range"): ("range", _num(pb.FieldMatch.Range, "low"), _num(pb.FieldMatch.Range, "high")),
    _num(pb.FieldMatch, "optional"): ("optional", _num(pb.FieldMatch.Optional, "value"), 0),
}
TA_ACTION = _num(pb.TableAction, "action")
AC_ID, AC_PARAMS = _num(pb.Action, "action_id"), _num(pb.Action, "params")
PA_ID, PA_VALUE = _num(pb.Action.Param, "param_id"), _num(pb.Action.Param, "value")

VARINT, LEN = 0, 2


class Unusual(Exception):
    """The bytes are not in the shape this reader handles: use the protobuf classes."""


def varint(buf: bytes, pos: int) -> tuple[int, int]:
    b = buf[pos]
    if b < 0x80:
        return b, pos + 1
    result = b & 0x7F
    shift = 7
    pos += 1
    while True:
        b = buf[pos]
        result |= (b & 0x7F) << shift
        pos += 1
        if b < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise Unusual("varint too long")


def fields(buf: bytes, pos: int, end: int) -> list[tuple[int, int, Any]]:
    """(field number, wire type, value) of a message in buf[pos:end]; LEN values as (start, end).

    A list, built in one loop with one-byte keys and lengths read inline (nearly all of them are).
    The WriteRequest and its election id are read with it; updates by `read_update`'s own loops."""
    out: list[tuple[int, int, Any]] = []
    append = out.append
    while pos < end:
        key = buf[pos]
        if key < 0x80:
            pos += 1
        else:
            key, pos = varint(buf, pos)
        wt = key & 7
        if wt == LEN:
            n = buf[pos]
            if n < 0x80:
                pos += 1
            else:
                n, pos = varint(buf, pos)
            stop = pos + n
            if stop > end:
                raise Unusual("truncated field")
            append((key >> 3, LEN, (pos, stop)))
            pos = stop
        elif wt == VARINT:
            value = buf[pos]
            if value < 0x80:
                pos += 1
            else:
                value, pos = varint(buf, pos)
            append((key >> 3, VARINT, value))
        else:
            raise Unusual(f"wire type {wt}")
    if pos != end:
        raise Unusual("truncated message")
    return out


@dataclass
class RawWrite:
    """A WriteRequest's header and its updates as byte ranges (Update messages)."""

    device_id: int
    election: int
    role: str
    atomicity: int
    updates: list[tuple[int, int]]
    has_role_id: bool = False


def split_write(buf: bytes) -> RawWrite:
    device_id = atomicity = election = 0
    role = ""
    updates: list[tuple[int, int]] = []
    has_role_id = False
    for num, wt, val in fields(buf, 0, len(buf)):
        if num == WR_UPDATES and wt == LEN:
            updates.append(val)  # type: ignore[arg-type]
        elif num == WR_DEVICE and wt == VARINT:
            device_id = val  # type: ignore[assignment]
        elif num == WR_ELECTION and wt == LEN:
            s, e = val  # type: ignore[misc]
            high = low = 0
            for n2, wt2, v2 in fields(buf, s, e):
                if wt2 != VARINT:
                    raise Unusual("election id")
                if n2 == U128_HIGH:
                    high = v2  # type: ignore[assignment]
                elif n2 == U128_LOW:
                    low = v2  # type: ignore[assignment]
            election = (high << 64) | low
        elif num == WR_ROLE and wt == LEN:
            s, e = val  # type: ignore[misc]
            role = buf[s:e].decode("utf-8")
        elif num == WR_ATOMICITY and wt == VARINT:
            atomicity = val  # type: ignore[assignment]
        elif num == WR_ROLE_ID:
            has_role_id = True
        else:
            raise Unusual(f"WriteRequest field {num}")
    return RawWrite(device_id, election, role, atomicity, updates, has_role_id)


def _k(num: int, wt: int) -> int:
    """The one-byte key of a field (every field the fast reader knows has a number below 16)."""
    key = (num << 3) | wt
    assert key < 0x80
    return key


KB_UP_TYPE, KB_UP_ENTITY, KB_ENT_TABLE = _k(UP_TYPE, VARINT), _k(UP_ENTITY, LEN), _k(ENT_TABLE, LEN)
KB_TE_TABLE, KB_TE_MATCH, KB_TE_ACTION = _k(TE_TABLE, VARINT), _k(TE_MATCH, LEN), _k(TE_ACTION, LEN)
KB_TE_PRIORITY, KB_TE_CMETA, KB_TE_IDLE, KB_TE_META = (_k(TE_PRIORITY, VARINT), _k(TE_CMETA, VARINT),
                                                       _k(TE_IDLE, VARINT), _k(TE_META, LEN))
KB_FM_ID = _k(FM_ID, VARINT)
# key byte of a match kind -> (kind, key byte of its 1st value, key byte of its 2nd value (0: none))
KB_FM_KINDS = {_k(num, LEN): (kind, _k(f1, LEN), _k(f2, VARINT if kind == "lpm" else LEN) if f2 else 0)
               for num, (kind, f1, f2) in FM_KINDS.items()}
KB_TA_ACTION, KB_AC_ID, KB_AC_PARAMS = _k(TA_ACTION, LEN), _k(AC_ID, VARINT), _k(AC_PARAMS, LEN)
KB_PA_ID, KB_PA_VALUE = _k(PA_ID, VARINT), _k(PA_VALUE, LEN)


@dataclass(slots=True)
class SimpleEntry:
    """A table entry with a direct action and nothing else the fast path would have to know."""

    table_id: int
    matches: list[tuple[int, str, bytes, bytes | int | None]]  # (field id, kind, value, 2nd value)
    priority: int
    controller_metadata: int
    idle_timeout_ns: int
    metadata: bytes
    action_id: int
    params: list[tuple[int, bytes]]


def read_update(buf: bytes, start: int, end: int) -> tuple[int, SimpleEntry | None]:
    """(update type, the entry if it is a simple table entry, else None).

    One pass over the bytes with every level inlined (no field lists, no calls per field): this is
    most of the decoding cost of a big table write. Anything unexpected (another field, a multi-byte
    key, another wire type, a length past its message) gives None: the protobuf classes then decode the
    update and the general path judges it, so this reader never has to be complete."""
    utype = 0
    ent_s = ent_e = -1
    pos = start
    while pos < end:  # Update
        key = buf[pos]
        pos += 1
        v = buf[pos]
        if v < 0x80:
            pos += 1
        else:
            v, pos = varint(buf, pos)
        if key == KB_UP_TYPE:
            utype = v
        elif key == KB_UP_ENTITY and ent_s < 0:
            ent_s, ent_e = pos, pos + v
            pos = ent_e
        else:
            return utype, None
    if pos != end or ent_s < 0:
        return utype, None
    # Entity: exactly one field, the table entry
    if ent_s >= ent_e or buf[ent_s] != KB_ENT_TABLE:
        return utype, None
    pos = ent_s + 1
    n = buf[pos]
    if n < 0x80:
        pos += 1
    else:
        n, pos = varint(buf, pos)
    if pos + n != ent_e:
        return utype, None
    return utype, _read_entry(buf, pos, ent_e)


def _read_entry(buf: bytes, pos: int, end: int) -> SimpleEntry | None:
    table_id = priority = cmeta = idle = 0
    metadata = b""
    matches: list = []
    act_s = act_e = -1
    kinds = KB_FM_KINDS
    while pos < end:  # TableEntry
        key = buf[pos]
        pos += 1
        v = buf[pos]
        if v < 0x80:
            pos += 1
        else:
            v, pos = varint(buf, pos)
        if key == KB_TE_MATCH:
            mend = pos + v
            if mend > end:
                return None
            # FieldMatch: field_id and one match kind, in either order
            fid = 0
            found = None
            while pos < mend:
                k2 = buf[pos]
                pos += 1
                v2 = buf[pos]
                if v2 < 0x80:
                    pos += 1
                else:
                    v2, pos = varint(buf, pos)
                if k2 == KB_FM_ID:
                    fid = v2
                    continue
                spec = kinds.get(k2)
                if spec is None or found is not None:
                    return None
                kind, k_a, k_b = spec
                kend = pos + v2
                if kend > mend:
                    return None
                a: bytes = b""
                b: bytes | int | None = None if not k_b else (0 if kind == "lpm" else b"")
                while pos < kend:
                    k3 = buf[pos]
                    pos += 1
                    v3 = buf[pos]
                    if v3 < 0x80:
                        pos += 1
                    else:
                        v3, pos = varint(buf, pos)
                    if k3 == k_a:
                        a = buf[pos:pos + v3]
                        pos += v3
                    elif k_b and k3 == k_b and kind == "lpm":
                        b = v3
                    elif k_b and k3 == k_b:
                        b = buf[pos:pos + v3]
                        pos += v3
                    else:
                        return None
                if pos != kend:
                    return None
                found = (kind, a, b)
            if pos != mend or found is None:
                return None
            matches.append((fid, found[0], found[1], found[2]))
        elif key == KB_TE_TABLE:
            table_id = v
        elif key == KB_TE_ACTION and act_s < 0:
            act_s, act_e = pos, pos + v
            pos = act_e
        elif key == KB_TE_PRIORITY:
            if v >= 1 << 31:
                return None  # negative int32: the general path says why not
            priority = v
        elif key == KB_TE_CMETA:
            cmeta = v
        elif key == KB_TE_IDLE:
            if v >= 1 << 63:
                return None
            idle = v
        elif key == KB_TE_META:
            metadata = buf[pos:pos + v]
            pos += v
        else:
            return None  # is_default_action, counters, meters, const, ...: the general path
    if pos != end or act_s < 0 or act_e > end:
        return None
    # TableAction: exactly one field, a direct action
    pos = act_s
    if pos >= act_e or buf[pos] != KB_TA_ACTION:
        return None  # members, groups, one-shot sets
    pos += 1
    n = buf[pos]
    if n < 0x80:
        pos += 1
    else:
        n, pos = varint(buf, pos)
    if pos + n != act_e:
        return None
    action_id = 0
    params: list[tuple[int, bytes]] = []
    while pos < act_e:  # Action
        key = buf[pos]
        pos += 1
        v = buf[pos]
        if v < 0x80:
            pos += 1
        else:
            v, pos = varint(buf, pos)
        if key == KB_AC_ID:
            action_id = v
        elif key == KB_AC_PARAMS:
            pend = pos + v
            if pend > act_e:
                return None
            pid = 0
            value = b""
            while pos < pend:  # Param
                k2 = buf[pos]
                pos += 1
                v2 = buf[pos]
                if v2 < 0x80:
                    pos += 1
                else:
                    v2, pos = varint(buf, pos)
                if k2 == KB_PA_ID:
                    pid = v2
                elif k2 == KB_PA_VALUE:
                    value = buf[pos:pos + v2]
                    pos += v2
                else:
                    return None
            if pos != pend:
                return None
            params.append((pid, value))
        else:
            return None
    if pos != act_e:
        return None
    return SimpleEntry(table_id, matches, priority, cmeta, idle, metadata, action_id, params)


# ---------------------------------------------------------------------------------------- writing
def _key(num: int, wt: int) -> bytes:
    return _varint_bytes((num << 3) | wt)


def _varint_bytes(v: int) -> bytes:
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def _len_field(key: bytes, body: bytes) -> bytes:
    return key + _varint_bytes(len(body)) + body


K_TE_TABLE, K_TE_MATCH, K_TE_ACTION = _key(TE_TABLE, VARINT), _key(TE_MATCH, LEN), _key(TE_ACTION, LEN)
K_TE_PRIORITY, K_TE_CMETA, K_TE_IDLE, K_TE_META = (_key(TE_PRIORITY, VARINT), _key(TE_CMETA, VARINT),
                                                   _key(TE_IDLE, VARINT), _key(TE_META, LEN))
K_FM_ID = _key(FM_ID, VARINT)
K_FM_KIND = {kind: (_key(num, LEN), _key(f1, LEN), _key(f2, VARINT if kind == "lpm" else LEN) if f2 else b"")
             for num, (kind, f1, f2) in FM_KINDS.items()}
K_TA_ACTION, K_AC_ID, K_AC_PARAMS = _key(TA_ACTION, LEN), _key(AC_ID, VARINT), _key(AC_PARAMS, LEN)
K_PA_ID, K_PA_VALUE = _key(PA_ID, VARINT), _key(PA_VALUE, LEN)


def encode_entry(table_id: int, matches: list[tuple[int, str, bytes, bytes | int | None]], priority: int,
                 cmeta: int, idle: int, metadata: bytes, action_id: int, params: list[tuple[int, bytes]]) -> bytes:
    """Serialized TableEntry of canonical parts (what the store keeps until someone reads it)."""
    out = [K_TE_TABLE, _varint_bytes(table_id)]
    for fid, kind, a, b in matches:
        kkind, k1, k2 = K_FM_KIND[kind]
        inner = _len_field(k1, a)
        if kind == "lpm":
            inner += k2 + _varint_bytes(b)  # type: ignore[arg-type]
        elif k2:
            inner += _len_field(k2, b)  # type: ignore[arg-type]
        out.append(_len_field(K_TE_MATCH, K_FM_ID + _varint_bytes(fid) + _len_field(kkind, inner)))
    act = K_AC_ID + _varint_bytes(action_id) + b"".join(
        _len_field(K_AC_PARAMS, K_PA_ID + _varint_bytes(pid) + _len_field(K_PA_VALUE, v)) for pid, v in params)
    out.append(_len_field(K_TE_ACTION, _len_field(K_TA_ACTION, act)))
    if priority:
        out += (K_TE_PRIORITY, _varint_bytes(priority))
    if cmeta:
        out += (K_TE_CMETA, _varint_bytes(cmeta))
    if idle:
        out += (K_TE_IDLE, _varint_bytes(idle))
    if metadata:
        out.append(_len_field(K_TE_META, metadata))
    return b"".join(out)
