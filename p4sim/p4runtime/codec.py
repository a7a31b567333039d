"""P4Runtime byte strings <-> Python ints (P4Runtime spec, "Bytestrings").

The server accepts the canonical form (no leading zero bytes) and the form
padded to ceil(bitwidth/8) bytes; it always answers in canonical form.
Longer strings and values that need more than `bitwidth` bits are rejected
with OUT_OF_RANGE / INVALID_ARGUMENT so that nothing is silently truncated.
"""

from __future__ import annotations

from p4sim.p4runtime.errors import P4RuntimeError


def decode(data: bytes, bitwidth: int, what: str) -> int:
    """Value of a big-endian byte string that must fit in `bitwidth` bits."""
    if not data:
        raise P4RuntimeError("INVALID_ARGUMENT", f"{what}: empty byte string")
    value = int.from_bytes(data, "big")
    if bitwidth <= 0:
        return value
    if value >> bitwidth:
        raise P4RuntimeError("OUT_OF_RANGE", f"{what}: value {value:#x} does not fit in {bitwidth} bits")
    nbytes = (bitwidth + 7) // 8
    if len(data) > nbytes:
        raise P4RuntimeError(
            "INVALID_ARGUMENT",
            f"{what}: {len(data)} bytes is longer than the {nbytes} bytes of a {bitwidth}-bit value",
        )
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
