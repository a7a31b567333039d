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

from p4exec.entry_codec import KINDS


def _num(msg, name: str) -> int:
    return msg.DESCRIPTOR.fields_by_name[name].number


WR_DEVICE, WR_ROLE_ID, WR_ROLE, WR_ELECTION, WR_UPDATES, WR_ATOMICITY = (
    _num(pb.WriteRequest, n) for n in ("device_id", "role_id", "role", "election_id", "updates", "atomicity"))
U128_HIGH, U128_LOW = _num(pb.Uint128, "high"), _num(pb.Uint128, "low")

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


# How a field's value is kept when a message is scanned (`scan`): a varint; LEN as one (start, end), for
# BYTES (a value) and SPAN (a message); repeated LEN as a list of (start, end); a LEN member of a oneof as
# (member, start, end), the members sharing one slot.
NUMBER, BYTES, SPAN, SPANS, ONEOF = range(5)


@dataclass(frozen=True)
class Shape:
    """The fields of a message the fast reader accepts: key byte -> (slot, how, oneof member). Any other
    key, a second SPAN or ONEOF field or a length past the message makes `scan` give up (None)."""

    slots: dict[int, tuple[int, int, str]]
    defaults: tuple

    @classmethod
    def of(cls, msg, oneof: tuple[str, ...] = (), **fields: int) -> Shape:
        """Fields by name (from `msg`'s descriptor) -> how each is kept, slots in the order given;
        the `oneof` members (LEN fields) share the slot after those."""
        slots = {}
        defaults: list[Any] = []
        for slot, (name, how) in enumerate(fields.items()):
            wire_type = VARINT if how == NUMBER else LEN
            slots[_k(_num(msg, name), wire_type)] = (slot, how, name)
            defaults.append(0 if how == NUMBER else None)
        if oneof:
            defaults.append(None)
            for name in oneof:
                slots[_k(_num(msg, name), LEN)] = (len(fields), ONEOF, name)
        return cls(slots, tuple(defaults))


def scan(buf: bytes, pos: int, end: int, shape: Shape) -> list | None:
    """The slot values of the message in buf[pos:end] (defaults for absent fields), or None.

    One loop, keys and lengths read inline: this is most of the decoding cost of a big table write."""
    out = list(shape.defaults)
    slots = shape.slots
    while pos < end:
        key = buf[pos]
        pos += 1
        v = buf[pos]
        if v < 0x80:
            pos += 1
        else:
            v, pos = varint(buf, pos)
        spec = slots.get(key)
        if spec is None:
            return None
        slot, how, name = spec
        if how == NUMBER:
            out[slot] = v
            continue
        stop = pos + v
        if stop > end:
            return None
        if how == BYTES:
            out[slot] = (pos, stop)
        elif how == SPAN:
            if out[slot] is not None:
                return None
            out[slot] = (pos, stop)
        elif how == ONEOF:
            if out[slot] is not None:
                return None
            out[slot] = (name, pos, stop)
        elif out[slot] is None:
            out[slot] = [(pos, stop)]
        else:
            out[slot].append((pos, stop))
        pos = stop
    if pos != end:
        return None
    return out


UPDATE = Shape.of(pb.Update, type=NUMBER, entity=SPAN)
ENTITY = Shape.of(pb.Entity, table_entry=SPAN)  # only a table entry
TABLE_ENTRY = Shape.of(pb.TableEntry, table_id=NUMBER, match=SPANS, action=SPAN, priority=NUMBER,
                       controller_metadata=NUMBER, idle_timeout_ns=NUMBER, metadata=BYTES)
FIELD_MATCH = Shape.of(pb.FieldMatch, oneof=tuple(KINDS), field_id=NUMBER)
# match kind -> the shape of its message (kinds and their values: p4exec/entry_codec.py; an LPM's 2nd value is a
# number, its prefix length)
MATCH_KINDS = {k.name: Shape.of(type(getattr(pb.FieldMatch(), k.name)), (), **{
    name: NUMBER if i and k.length_second else BYTES for i, name in enumerate(k.values)}) for k in KINDS.values()}
TABLE_ACTION = Shape.of(pb.TableAction, action=SPAN)  # only a direct action
ACTION = Shape.of(pb.Action, action_id=NUMBER, params=SPANS)
PARAM = Shape.of(pb.Action.Param, param_id=NUMBER, value=BYTES)


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


Leaves = list[tuple[int, int, str, int]]  # (start, end, what, index) of every value read: see Template


def read_update(buf: bytes, start: int, end: int, leaves: Leaves | None = None) -> tuple[int, SimpleEntry | None]:
    """(update type, the entry if it is a simple table entry, else None).

    Anything unexpected (another field, a multi-byte key, another wire type, a length past its message)
    gives None: the protobuf classes then decode the update and the general path judges it, so this
    reader never has to be complete. `leaves` collects where the entry's byte values are."""
    update = scan(buf, start, end, UPDATE)
    if update is None:
        return 0, None
    utype, entity = update
    if entity is None:
        return utype, None
    ent = scan(buf, entity[0], entity[1], ENTITY)
    if ent is None or ent[0] is None:
        return utype, None
    return utype, _read_entry(buf, ent[0][0], ent[0][1], leaves)


def _value(buf: bytes, span: tuple[int, int] | None, leaves: Leaves | None, what: str, index: int) -> bytes:
    if span is None:
        return b""
    if leaves is not None:
        leaves.append((span[0], span[1], what, index))
    return buf[span[0]:span[1]]


def _read_entry(buf: bytes, pos: int, end: int, leaves: Leaves | None) -> SimpleEntry | None:
    te = scan(buf, pos, end, TABLE_ENTRY)
    if te is None:
        return None  # is_default_action, counters, meters, const, ...: the general path
    table_id, match_spans, action_span, priority, cmeta, idle, meta_span = te
    if action_span is None or priority >= 1 << 31 or idle >= 1 << 63:
        return None  # no action; a negative int32 or int64: the general path says why not
    matches: list[tuple[int, str, bytes, bytes | int | None]] = []
    for i, (s, e) in enumerate(match_spans or ()):
        fm = scan(buf, s, e, FIELD_MATCH)
        if fm is None or fm[1] is None:
            return None  # a field match has exactly one kind
        kind, ks, ke = fm[1]
        value = scan(buf, ks, ke, MATCH_KINDS[kind])
        if value is None:
            return None
        a = _value(buf, value[0], leaves, "a", i)
        if KINDS[kind].length_second:
            b: bytes | int | None = value[1]
        elif len(value) > 1:
            b = _value(buf, value[1], leaves, "b", i)
        else:
            b = None
        matches.append((fm[0], kind, a, b))
    ta = scan(buf, action_span[0], action_span[1], TABLE_ACTION)
    if ta is None or ta[0] is None:
        return None  # members, groups, one-shot sets
    action = scan(buf, ta[0][0], ta[0][1], ACTION)
    if action is None:
        return None
    action_id, param_spans = action
    params = []
    for i, (s, e) in enumerate(param_spans or ()):
        param = scan(buf, s, e, PARAM)
        if param is None:
            return None
        params.append((param[0], _value(buf, param[1], leaves, "p", i)))
    metadata = _value(buf, meta_span, leaves, "m", 0)
    return SimpleEntry(table_id, matches, priority, cmeta, idle, metadata, action_id, params)


class Template:
    """The layout of one simple update, to read the next ones of a batch without scanning them.

    The updates of a big Write differ only in their values (match values, action parameters): the same
    bytes everywhere else (keys, lengths, ids, prefix lengths, priority) mean the same message with the
    values at the same places. `values` checks those bytes and slices the values (measured: 4x cheaper
    than `read_update`); any other byte gives None (read it with `read_update`)."""

    def __init__(self, buf: bytes, start: int, end: int, utype: int, entry: SimpleEntry, leaves: Leaves):
        self.utype = utype
        self.entry = entry
        spans = sorted((s - start, e - start) for s, e, _, _ in leaves)
        self.fixed: list[tuple[int, int, bytes]] = []  # (start, end, bytes) between the values
        at = 0
        for s, e in [*spans, (end - start, end - start)]:
            if s > at:
                self.fixed.append((at, s, buf[start + at:start + s]))
            at = e
        where = {(what, i): n for n, (_, _, what, i) in enumerate(leaves)}
        self.spans = [(s - start, e - start) for s, e, _, _ in leaves]
        # value positions (-1: the value is absent, b"" then, or a prefix length in fixed bytes)
        self.matches = [(fid, kind, where.get(("a", i), -1), where.get(("b", i), -1), b)
                        for i, (fid, kind, _a, b) in enumerate(entry.matches)]
        self.params = [(pid, where.get(("p", i), -1)) for i, (pid, _v) in enumerate(entry.params)]
        self.meta = where.get(("m", 0), -1)

    def values(self, buf: bytes, start: int) -> list[bytes] | None:
        """The values of the update at `start` (then b"" for an absent one, at index -1), or None if
        its fixed bytes differ from the template's (a message of another shape)."""
        for s, e, fixed in self.fixed:
            if buf[start + s:start + e] != fixed:
                return None
        vals = [buf[start + s:start + e] for s, e in self.spans]
        vals.append(b"")
        return vals
