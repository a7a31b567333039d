"""Human values → canonical P4Runtime bytestrings (spec: shortest big-endian form, at least one byte)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.codec import EncodingError, decode, encode, format_value, parse_prefix, to_int


def test_readable_forms() -> None:
    assert to_int("00:00:0a:00:01:01") == 0x0A000101
    assert to_int("10.0.1.1") == 0x0A000101
    assert to_int("0x1f") == 31
    assert to_int(b"\x01\x00") == 256


def test_canonical_is_shortest_with_at_least_one_byte() -> None:
    assert encode(0, 9) == b"\x00"
    assert encode(1, 48) == b"\x01"
    assert encode("10.0.0.1", 32) == b"\x0a\x00\x00\x01"
    assert encode(0x1FF, 9) == b"\x01\xff"


def test_values_outside_the_width_are_refused() -> None:
    with pytest.raises(EncodingError):
        encode(512, 9)
    with pytest.raises(EncodingError):
        encode(-1, 8)
    with pytest.raises(EncodingError):
        to_int("not-a-value")


def test_prefixes_clear_host_bits() -> None:
    assert parse_prefix("10.0.1.77/24", 32) == (0x0A000100, 24)
    assert parse_prefix(("10.0.1.0", 0), 32) == (0, 0)
    assert parse_prefix("10.0.1.1", 32) == (0x0A000101, 32)
    with pytest.raises(EncodingError):
        parse_prefix("10.0.0.0/33", 32)


def test_human_formatting() -> None:
    assert format_value(0x0A000101, 32) == "10.0.1.1"
    assert format_value(0x000000000101, 48) == "00:00:00:00:01:01"


@given(st.integers(min_value=1, max_value=128).flatmap(
    lambda w: st.tuples(st.just(w), st.integers(min_value=0, max_value=(1 << w) - 1))))
def test_round_trip(width_and_value: tuple[int, int]) -> None:
    width, value = width_and_value
    data = encode(value, width)
    assert decode(data) == value
    assert len(data) == max(1, (value.bit_length() + 7) // 8)
