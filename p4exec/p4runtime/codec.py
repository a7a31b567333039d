"""P4Runtime byte strings <-> Python ints (P4Runtime spec, "Bytestrings").

The server accepts any encoding whose value fits the bit width (leading zero
bytes are allowed) and always answers in the canonical, shortest form.
"""

from __future__ import annotations

from p4exec.p4runtime.errors import P4RuntimeError


def decode(data: bytes, bitwidth: int, what: str) -> int:
    """Value of a big-endian byte string that must fit in `bitwidth` bits.

    Any length is accepted as long as the value fits (the spec lets a program's
    widths change under old clients); an empty string or a value that needs more
    than `bitwidth` bits is OUT_OF_RANGE.
    """
    if not data:
        raise P4RuntimeError("OUT_OF_RANGE", f"{what}: empty byte string")
    value = int.from_bytes(data, "big")
    if bitwidth > 0 and value >> bitwidth:
        shown = f"value {value:#x}" if len(data) <= 16 else f"a {len(data)}-byte value"
        raise P4RuntimeError("OUT_OF_RANGE", f"{what}: {shown} does not fit in {bitwidth} bits")
    return value


def encode(value: int) -> bytes:
    """Canonical byte string of a non-negative int (zero is one zero byte)."""
    if value < 0:
        raise ValueError("P4Runtime byte strings carry non-negative values")
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


def encode_padded(value: int, bitwidth: int) -> bytes:
    """Full-width byte string, used when bits are laid out on the wire (packet headers)."""
    return value.to_bytes((bitwidth + 7) // 8, "big")


def pack_fields(fields: list[tuple[int, int]]) -> bytes:
    """Bit-pack (value, bitwidth) pairs MSB-first, as a P4 header is emitted.

    Controller headers (`@controller_header`) travel in front of the payload in
    this layout, which is how the CPU port exchanges metadata with the program.
    """
    total_bits = sum(width for _, width in fields)
    acc = 0
    for value, width in fields:
        acc = (acc << width) | (value & ((1 << width) - 1))
    pad = (-total_bits) % 8
    return (acc << pad).to_bytes((total_bits + pad) // 8, "big")


def unpack_fields(data: bytes, widths: list[int]) -> tuple[list[int], bytes] | None:
    """Inverse of `pack_fields`: values and the remaining payload, or None if too short."""
    total_bits = sum(widths)
    nbytes = (total_bits + 7) // 8
    if len(data) < nbytes:
        return None
    acc = int.from_bytes(data[:nbytes], "big") >> (nbytes * 8 - total_bits)
    values = []
    shift = total_bits
    for width in widths:
        shift -= width
        values.append((acc >> shift) & ((1 << width) - 1))
    return values, data[nbytes:]
