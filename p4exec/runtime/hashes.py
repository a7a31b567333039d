"""Hash and checksum algorithms with BMv2's exact outputs, and BMv2's byte layout of field lists.

BMv2 (``bm_sim/calculations``) packs a field list as one bit string, fields MSB-first in order, into
``ceil(bits / 8)`` bytes; a total width that is not a multiple of 8 leaves zero padding in the *last* byte's
low bits.  (BMv2 also skips fields of invalid headers; callers pass only the fields BMv2 would see.)
The algorithms then run over those bytes:

- ``crc16``: CRC-16/ARC (poly 0x8005, init 0, reflected in/out, xorout 0; check("123456789") = 0xBB3D)
- ``crc32``: CRC-32/ISO-HDLC (poly 0x04C11DB7, init/xorout 0xFFFFFFFF, reflected; check = 0xCBF43926)
- ``crc16_custom`` / ``crc32_custom``: configurable, defaults equal to ``crc16`` / ``crc32``
- ``crcCCITT``: CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, not reflected; check = 0x29B1)
- ``csum16`` / ``cksum16``: one's complement Internet checksum (RFC 1071), odd tail padded with a zero byte
- ``xor16``: XOR of big-endian 16-bit words, odd tail padded with a zero byte
- ``identity``: the first (up to) 8 bytes as a big-endian integer
"""
from __future__ import annotations

import binascii
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

Fields = Sequence[tuple[int, int]]  # (value, bitwidth) pairs
_NATIVE_LITTLE = memoryview(b"\x01\x00").cast("H")[0] == 1


def pack_fields(fields: Fields) -> bytes:
    """BMv2's byte layout of a field list: concatenated MSB-first, zero-padded at the end to a byte."""
    acc = 0
    nbits = 0
    for value, width in fields:
        acc = (acc << width) | (value & ((1 << width) - 1))
        nbits += width
    pad = -nbits % 8
    return (acc << pad).to_bytes((nbits + pad) // 8, "big")


def _reflect(v: int, nbits: int) -> int:
    return int(format(v, f"0{nbits}b")[::-1], 2) if nbits else 0


@dataclass(frozen=True)
class CrcConfig:
    """A CRC as BMv2's ``crc_custom`` runs it (same field meanings as its ``crc_config_t``)."""

    width: int
    poly: int
    init: int
    xor_out: int
    reflect_data: bool
    reflect_remainder: bool


CRC16_DEFAULT = CrcConfig(16, 0x8005, 0x0000, 0x0000, True, True)
CRC32_DEFAULT = CrcConfig(32, 0x04C11DB7, 0xFFFFFFFF, 0xFFFFFFFF, True, True)
CRC_CCITT = CrcConfig(16, 0x1021, 0xFFFF, 0x0000, False, False)


@lru_cache(maxsize=64)
def _msb_table(width: int, poly: int) -> tuple[int, ...]:
    """256-entry table of the MSB-first (non-reflected) CRC, as BMv2 precomputes it."""
    top = 1 << (width - 1)
    mask = (1 << width) - 1
    table = []
    for dividend in range(256):
        rem = dividend << (width - 8)
        for _ in range(8):
            rem = ((rem << 1) ^ poly) if rem & top else (rem << 1)
            rem &= mask
        table.append(rem)
    return tuple(table)


@lru_cache(maxsize=64)
def _lsb_table(width: int, poly: int) -> tuple[int, ...]:
    """Table of the reflected (LSB-first) form of the same CRC: a faster route to the same output."""
    rpoly = _reflect(poly, width)
    table = []
    for b in range(256):
        crc = b
        for _ in range(8):
            crc = (crc >> 1) ^ rpoly if crc & 1 else crc >> 1
        table.append(crc)
    return tuple(table)


_REFLECT8 = tuple(_reflect(b, 8) for b in range(256))


def crc_generic(cfg: CrcConfig, data: bytes) -> int:
    """BMv2's crc_custom loop, byte for byte (reference implementation)."""
    w = cfg.width
    mask = (1 << w) - 1
    table = _msb_table(w, cfg.poly)
    rem = cfg.init
    shift = w - 8
    for b in data:
        d = _REFLECT8[b] if cfg.reflect_data else b
        rem = (table[(d ^ (rem >> shift)) & 0xFF] ^ (rem << 8)) & mask
    if cfg.reflect_remainder:
        rem = _reflect(rem, w)
    return rem ^ cfg.xor_out


def crc(cfg: CrcConfig, data: bytes) -> int:
    """Same result as :func:`crc_generic`, through the fastest equivalent route."""
    if cfg == CRC32_DEFAULT:
        return binascii.crc32(data)
    if cfg.reflect_data and cfg.reflect_remainder:
        # Fully reflected CRC: run LSB-first with the reflected initial value.
        table = _lsb_table(cfg.width, cfg.poly)
        rem = _reflect(cfg.init, cfg.width)
        for b in data:
            rem = (rem >> 8) ^ table[(rem ^ b) & 0xFF]
        return rem ^ cfg.xor_out
    return crc_generic(cfg, data)


@lru_cache(maxsize=1)
def _crc16_word_table() -> tuple[int, ...]:
    """CRC-16/ARC over two bytes at once: with a 16-bit register, ``crc' = T16[crc ^ little_endian_word]``."""
    t = _lsb_table(16, 0x8005)
    out = []
    for x in range(65536):
        c = t[x & 0xFF]
        out.append((c >> 8) ^ t[(c ^ (x >> 8)) & 0xFF])
    return tuple(out)


# Flows repeat: the same 5-tuple or entropy bytes are hashed for every packet of a flow, so a bounded memo
# of recent inputs answers most calls with one dict lookup (measured: crc16 was ~9 % of an ETH+ switch's time).
_CRC16_MEMO: dict[bytes, int] = {}
_MEMO_MAX = 1 << 16


def crc16(data: bytes) -> int:
    if type(data) is not bytes:
        data = bytes(data)
    got = _CRC16_MEMO.get(data)
    if got is not None:
        return got
    rem = _crc16_compute(data)
    if len(_CRC16_MEMO) >= _MEMO_MAX:
        _CRC16_MEMO.clear()
    _CRC16_MEMO[data] = rem
    return rem


def _crc16_compute(data: bytes) -> int:
    t8 = _lsb_table(16, 0x8005)
    n = len(data)
    rem = 0
    if n >= 4 and _NATIVE_LITTLE:
        t16 = _crc16_word_table()
        for w in memoryview(data[: n & ~1]).cast("H"):
            rem = t16[rem ^ w]
        if n & 1:
            rem = (rem >> 8) ^ t8[(rem ^ data[-1]) & 0xFF]
        return rem
    for b in data:
        rem = (rem >> 8) ^ t8[(rem ^ b) & 0xFF]
    return rem


def crc32(data: bytes) -> int:
    return binascii.crc32(data)


def crc_ccitt(data: bytes) -> int:
    return crc_generic(CRC_CCITT, data)


def csum16(data: bytes) -> int:
    """One's complement of the one's complement sum of big-endian 16-bit words (RFC 1071)."""
    if len(data) % 2:
        data += b"\x00"
    # The one's complement sum is byte-order independent (RFC 1071): sum native words, fold, swap back.
    s = sum(memoryview(data).cast("H"))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    if _NATIVE_LITTLE:
        s = ((s & 0xFF) << 8) | (s >> 8)
    return ~s & 0xFFFF



def xor16(data: bytes) -> int:
    if len(data) % 2:
        data += b"\x00"
    r = 0
    for i in range(0, len(data), 2):
        r ^= (data[i] << 8) | data[i + 1]
    return r


def identity(data: bytes) -> int:
    return int.from_bytes(data[:8], "big") if data else 0


#: name -> (function over bytes, natural output width in bits)
ALGORITHMS: dict[str, tuple[Callable[[bytes], int], int]] = {
    "crc16": (crc16, 16),
    "crc32": (crc32, 32),
    "crcCCITT": (crc_ccitt, 16),
    "csum16": (csum16, 16),
    "cksum16": (csum16, 16),
    "xor16": (xor16, 16),
    "identity": (identity, 64),
}


class CustomCrcs:
    """Per-instance configuration of ``crc16_custom`` / ``crc32_custom`` (BMv2 lets the control plane set it).

    The defaults are BMv2's: equal to ``crc16`` and ``crc32``.
    """

    def __init__(self) -> None:
        self.configs: dict[str, CrcConfig] = {}

    def set(self, name: str, cfg: CrcConfig) -> None:
        self.configs[name] = cfg

    def get(self, algo: str, name: str | None = None) -> CrcConfig:
        if name is not None and name in self.configs:
            return self.configs[name]
        return CRC16_DEFAULT if algo == "crc16_custom" else CRC32_DEFAULT


_DEFAULT_CUSTOM = {"crc16_custom": CRC16_DEFAULT, "crc32_custom": CRC32_DEFAULT}


def algorithm_width(algo: str) -> int:
    if algo in _DEFAULT_CUSTOM:
        return _DEFAULT_CUSTOM[algo].width
    try:
        return ALGORITHMS[algo][1]
    except KeyError:
        raise ValueError(f"unknown hash algorithm {algo!r}") from None


def hash_bytes(algo: str, data: bytes, crc_config: CrcConfig | None = None) -> int:
    """Run ``algo`` over raw bytes; ``crc_config`` overrides the parameters of a ``*_custom`` CRC."""
    entry = ALGORITHMS.get(algo)
    if entry is not None:
        return entry[0](data)
    default = _DEFAULT_CUSTOM.get(algo)
    if default is None:
        raise ValueError(f"unknown hash algorithm {algo!r}")
    return crc(crc_config or default, data)


def hash_fields(algo: str, fields: Fields, crc_config: CrcConfig | None = None, payload: bytes = b"") -> int:
    """BMv2's calculation over a field list of ``(value, bitwidth)`` pairs.

    ``payload`` (for ``*_checksum_with_payload``) is appended after the byte-padded field list, as BMv2 does.
    """
    data = pack_fields(fields)
    return hash_bytes(algo, data + payload if payload else data, crc_config)


def v1model_hash(algo: str, base: int, max: int, fields: Fields, out_width: int,  # noqa: A002
                 crc_config: CrcConfig | None = None) -> int:
    """v1model ``hash()`` as BMv2 executes it: ``(h % max) + base`` truncated to the output field.

    ``max == 0`` is treated as 1 (BMv2 logs a warning and does the same), so the result is ``base``.
    """
    h = hash_fields(algo, fields, crc_config)
    return ((h % (max or 1)) + base) & ((1 << out_width) - 1)


def make_hasher(algo: str, crc_config: CrcConfig | None = None) -> Callable[[Fields], int]:
    """A specialised ``fields -> hash`` function (for selectors and generated code)."""
    entry = ALGORITHMS.get(algo)
    if entry is not None:
        fn = entry[0]
        return lambda fields: fn(pack_fields(fields))
    cfg = crc_config or _DEFAULT_CUSTOM.get(algo)
    if cfg is None:
        raise ValueError(f"unknown hash algorithm {algo!r}")
    return lambda fields: crc(cfg, pack_fields(fields))
