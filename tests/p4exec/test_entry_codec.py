"""The match kinds of p4exec/entry_codec.py: one declaration, read the same way by every side.

The general path evaluates a kind's rules (`refusal`), the fast path's generated readers inline them
(`refused_code`): both must refuse exactly the same matches. The wire keys the controller's encoder writes
must be the bytes the protobuf runtime writes for the same field match."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from p4.v1 import p4runtime_pb2 as pb

from p4exec.entry_codec import KINDS, canonical_bytes, fill, numbers, refusal, refused_code, wire_keys

WIDTH = 8


@settings(max_examples=300, deadline=None)
@given(kind=st.sampled_from(["lpm", "ternary", "range"]), a=st.integers(0, 255), b=st.integers(0, 255))
def test_the_generated_check_refuses_what_the_general_check_refuses(kind: str, a: int, b: int) -> None:
    k = KINDS[kind]
    if k.length_second:
        b %= WIDTH + 1
        if refusal(k, 0, b, WIDTH, "f", on_length=True):
            return  # the fast path never generates a reader for an impossible prefix length
    code = refused_code(k, "a", str(b) if k.length_second else "b", WIDTH)
    generated = bool(eval(code, {}, {"a": a, "b": b}))  # noqa: S307 - the rules' own text
    assert generated == (refusal(k, a, b, WIDTH, "f") is not None), (kind, a, b, code)


def test_refusals_say_why() -> None:
    assert refusal(KINDS["lpm"], 0x0A000101, 24, 32, "f") == "f: value has bits set beyond the /24 prefix"
    assert refusal(KINDS["lpm"], 0, 0, 32, "f", on_length=True) == "f: a /0 prefix must be omitted (don't-care)"
    assert refusal(KINDS["ternary"], 1, 0, 8, "f") == "f: an all-zero mask must be omitted (don't-care)"
    assert refusal(KINDS["range"], 0, 255, 8, "f") == "f: a full range must be omitted (don't-care)"
    assert refusal(KINDS["range"], 3, 2, 8, "f") == "f: range low 3 > high 2"
    assert refusal(KINDS["exact"], 5, 5, 8, "f") is None


def _ld(key: bytes, body: bytes) -> bytes:
    assert len(body) < 0x80
    return key + bytes([len(body)]) + body


@given(value=st.integers(0, (1 << 48) - 1), second=st.integers(1, 48))
def test_the_wire_keys_give_the_protobuf_runtimes_bytes_and_numbers_reads_them_back(value: int, second: int) -> None:
    for k in KINDS.values():
        values = (value, second)[:k.arity]
        fm = fill(pb.FieldMatch(), 7, k, values)
        oneof, first, second_key = wire_keys(k)
        body = _ld(first, canonical_bytes(value))
        if k.arity == 2:
            body += second_key + bytes([second]) if k.length_second else _ld(second_key, canonical_bytes(second))
        assert fm.SerializeToString() == b"\x08\x07" + _ld(oneof, body), k.name  # field_id 7, then the kind
        assert numbers(fm) == (k, values)
