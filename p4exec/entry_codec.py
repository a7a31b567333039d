"""The match kinds of a P4Runtime table entry, declared once for the controller and the server.

A match kind is its protobuf oneof (`FieldMatch.exact`, `.lpm`, ...), the names of its two values (the
second of an LPM is a prefix length, not a byte string), the runtime match class that holds it, and the
rules a written match must keep beyond fitting its width (P4Runtime spec, "Match Format"): each rule is one
Python expression over `a` and `b` (the two values as ints) and `w` (the field's width) that is true when the
match is refused, with the message saying why. Everything that reads or writes a field match goes through
this table, side by side:

- encoding (controller): `wire_keys` gives the keys `controller.messages.TableEntryEncoder` writes, and the
  protobuf form is parsed from those same bytes, so one encoder serves both forms;
- decoding (server): the general path (`p4exec.p4runtime.translate`) evaluates `refusal`, the fast path's
  generated readers (`p4exec.p4runtime.fastpath`) inline `refused_code`: one set of rules, two speeds;
- reading matches as numbers (`numbers`): the server's runtime binding, the controller's reconciliation.

It sits at the bottom of the package tree (it needs only the P4Runtime protobufs), like p4info_index.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2 as pb

MF = p4info_pb2.MatchField


@dataclass(frozen=True)
class Rule:
    """A written match is refused when `refused` (an expression over a, b, w) is true; `message` is formatted
    with `what` (the field), a, b and w. `on_length`: checked on an LPM's prefix length before its value is
    read (an impossible length is reported as such, whatever the value)."""

    refused: str
    message: str
    on_length: bool = False
    test: Callable[[int, int, int], Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        fn = eval(f"lambda a, b, w: {self.refused}")  # noqa: S307 - our own constant text, just above
        object.__setattr__(self, "test", fn)


@dataclass(frozen=True)
class MatchKind:
    name: str  # the FieldMatch oneof, and the P4Info match type in lower case
    p4info: int  # p4info MatchField.MatchType
    values: tuple[str, ...]  # protobuf (and runtime class) field names of its values, in order
    labels: tuple[str, ...]  # what each value is called in messages, after the field's name
    runtime: str  # the p4exec.runtime match class
    rules: tuple[Rule, ...] = ()
    length_second: bool = False  # the second value is a prefix length (varint), not a byte string

    @property
    def arity(self) -> int:
        return len(self.values)


KINDS: dict[str, MatchKind] = {k.name: k for k in (
    MatchKind("exact", MF.EXACT, ("value",), ("",), "Exact"),
    MatchKind("lpm", MF.LPM, ("value", "prefix_len"), ("", ""), "Lpm", (
        Rule("b < 0 or b > w", "{what}: prefix length {b} outside 0..{w}", on_length=True),
        Rule("b == 0", "{what}: a /0 prefix must be omitted (don't-care)", on_length=True),
        Rule("a & ((1 << (w - b)) - 1)", "{what}: value has bits set beyond the /{b} prefix"),
    ), length_second=True),
    MatchKind("ternary", MF.TERNARY, ("value", "mask"), ("", " mask"), "Ternary", (
        Rule("b == 0", "{what}: an all-zero mask must be omitted (don't-care)"),
        Rule("a & ~b", "{what}: value has bits set outside the mask"),
    )),
    MatchKind("range", MF.RANGE, ("low", "high"), (" low", " high"), "Range", (
        Rule("a > b", "{what}: range low {a} > high {b}"),
        Rule("a == 0 and b == (1 << w) - 1", "{what}: a full range must be omitted (don't-care)"),
    )),
    MatchKind("optional", MF.OPTIONAL, ("value",), ("",), "Optional_"),
)}
BY_P4INFO: dict[int, MatchKind] = {k.p4info: k for k in KINDS.values()}
BY_RUNTIME: dict[str, MatchKind] = {k.runtime: k for k in KINDS.values()}


# ---- decode ----------------------------------------------------------------------------------------------
def refusal(kind: MatchKind, a: int, b: int, w: int, what: str, on_length: bool = False) -> str | None:
    """Why a match of `kind` with values a, b on a `w`-bit field is refused, or None (the general path).
    `on_length`: only the rules on an LPM's prefix length (before its value is read)."""
    for rule in kind.rules:
        if rule.on_length == on_length and rule.test(a, b, w):
            return rule.message.format(what=what, a=a, b=b, w=w)
    return None


_NAME = re.compile(r"\b[abw]\b")


def refused_code(kind: MatchKind, a: str, b: str, w: int) -> str:
    """The rules of `kind` (not those on a prefix length) as one Python expression over the names `a` and
    `b` and the width `w`: the condition under which a generated reader refuses the match."""
    names = {"a": a, "b": b, "w": str(w)}
    parts = [f"({_NAME.sub(lambda m: names[m.group()], r.refused)})" for r in kind.rules if not r.on_length]
    return " or ".join(parts) or "False"


def numbers(fm: pb.FieldMatch) -> tuple[MatchKind | None, tuple[int, ...]]:
    """A field match's kind and values as ints, however many bytes they were written with."""
    kind = KINDS.get(fm.WhichOneof("field_match_type") or "")
    if kind is None:
        return None, ()
    sub = getattr(fm, kind.name)
    out = []
    for i, name in enumerate(kind.values):
        raw = getattr(sub, name)
        out.append(raw if i and kind.length_second else int.from_bytes(raw, "big"))
    return kind, tuple(out)


# ---- encode ----------------------------------------------------------------------------------------------
def canonical_bytes(value: int) -> bytes:
    """P4Runtime's canonical byte string of a non-negative int: the shortest, at least one byte."""
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


def fill(out: pb.FieldMatch, field_id: int, kind: MatchKind, values: tuple[int, ...]) -> pb.FieldMatch:
    """Write a field match of `kind` with int `values` into `out`, in canonical form."""
    out.field_id = field_id
    sub = getattr(out, kind.name)
    for i, name in enumerate(kind.values):
        v = values[i]
        setattr(sub, name, v if i and kind.length_second else canonical_bytes(v))
    return out


def field_number(msg: Any, name: str) -> int:
    """A protobuf field's number, from the message's descriptor."""
    return int(msg.DESCRIPTOR.fields_by_name[name].number)


def varint(n: int) -> bytes:
    """Protobuf's base-128 varint of a non-negative int."""
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def wire_keys(kind: MatchKind) -> tuple[bytes, bytes, bytes]:
    """Serialized keys of a field match of `kind`: the FieldMatch's oneof field, and its values' fields (b""
    for a kind with one value; a prefix length is a varint, the rest are length-delimited)."""
    sub = getattr(pb.FieldMatch(), kind.name)
    keys = [varint(field_number(pb.FieldMatch, kind.name) << 3 | 2)]
    for i, name in enumerate(kind.values):
        wire_type = 0 if i and kind.length_second else 2
        keys.append(varint(field_number(sub, name) << 3 | wire_type))
    keys += [b""] * (3 - len(keys))
    return keys[0], keys[1], keys[2]
