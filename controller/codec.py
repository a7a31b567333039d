"""Value encoding between what a researcher types and P4Runtime's canonical byte strings.

P4Runtime (spec section "Bytestrings") wants the shortest big-endian representation of an unsigned value, at
least one byte. Users write MACs, dotted IPv4 addresses, prefixes and ints; this module turns all of them into
ints first, checks them against the field width, then encodes.
"""

from __future__ import annotations

import ipaddress
import re

_MAC = re.compile(r"^[0-9a-fA-F]{2}([:-][0-9a-fA-F]{2}){5}$")

Value = int | str | bytes


class EncodingError(ValueError):
    """A value that cannot represent a field of the given width."""


def to_int(value: Value) -> int:
    """Read an int, a MAC (`aa:bb:..`), an IPv4/IPv6 address, a hex/decimal string or raw bytes."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        if value < 0:
            raise EncodingError(f"negative value {value}")
        return value
    if isinstance(value, bytes | bytearray):
        return int.from_bytes(value, "big")
    text = value.strip()
    if _MAC.match(text):
        return int(text.replace(":", "").replace("-", ""), 16)
    try:
        return int(ipaddress.ip_address(text))
    except ValueError:
        pass
    try:
        return int(text, 0)
    except ValueError:
        raise EncodingError(f"cannot read {value!r} as a number, MAC or IP address") from None


def encode(value: Value, bitwidth: int) -> bytes:
    """Canonical P4Runtime bytestring of `value` for a field `bitwidth` bits wide."""
    number = to_int(value)
    if bitwidth and number >> bitwidth:
        raise EncodingError(f"value {value!r} does not fit in {bitwidth} bits")
    return number.to_bytes(max(1, (number.bit_length() + 7) // 8), "big")


def decode(data: bytes) -> int:
    return int.from_bytes(data, "big")


def parse_prefix(value: Value | tuple[Value, int], bitwidth: int) -> tuple[int, int]:
    """`"10.0.1.0/24"` or `(value, length)` → (value with host bits cleared, prefix length)."""
    if isinstance(value, tuple):
        raw, length = value
        number = to_int(raw)
    elif isinstance(value, str) and "/" in value:
        addr, _, length_text = value.partition("/")
        number, length = to_int(addr), int(length_text)
    else:
        number, length = to_int(value), bitwidth
    if not 0 <= length <= bitwidth:
        raise EncodingError(f"prefix length {length} outside 0..{bitwidth}")
    mask = ((1 << length) - 1) << (bitwidth - length) if length else 0
    return number & mask, length


def format_value(number: int, bitwidth: int) -> str:
    """Human form for tables and logs: MACs and IPv4 addresses look like themselves."""
    if bitwidth == 48:
        raw = f"{number:012x}"
        return ":".join(raw[i : i + 2] for i in range(0, 12, 2))
    if bitwidth == 32:
        return str(ipaddress.IPv4Address(number))
    return hex(number) if number > 9 else str(number)
