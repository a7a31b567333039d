"""Values wider than 64 bits in the generated C: bit<W> for 64 < W <= 128 is an `unsigned __int128` (`u128`)
reduced modulo 2^W, as every narrower value is a `u64` reduced modulo 2^W. gcc and clang have the type on every
64-bit target; a compiler without it rejects the C, and the loader keeps the Python pipeline with that reason.

cffi cannot declare `__int128`, so the declarations cffi reads (`cdef_view`) leave wide members out of the
structs and let the compiler lay them out (`...;`): Python only copies those structs whole.

Table keys and action data wider than 64 bits travel through the runtime's u64 words as two words, the high
one first (`split`), so the control plane's values reach the lookup unchanged.
"""
from __future__ import annotations

import re

from p4exec.compiler import types as T

WIDE_MAX = 128


class WideUnsupported(Exception):
    """A wide value the C generator does not handle (signed, or wider than 128 bits)."""


def width(t: T.Type) -> int | None:
    """The width of an unsigned bit<W> with 64 < W <= 128, None for anything else (narrow or not bits)."""
    b = T.strip_new(t)
    if isinstance(b, T.EnumT) and b.base is not None:
        b = T.strip_new(b.base)
    if not isinstance(b, T.Bits) or b.width <= 64:
        return None
    if b.signed:
        raise WideUnsupported(f"{b} wider than 64 bits (signed)")
    if b.width > WIDE_MAX:
        raise WideUnsupported(f"{b} wider than {WIDE_MAX} bits")
    return b.width


def mask(w: int) -> str:
    """2^w - 1 as a C u128 expression (64 < w <= 128)."""
    return "(~(u128)0)" if w >= 128 else f"((((u128)1) << {w}) - 1)"


def const(v: int) -> str:
    """A non-negative constant below 2^128 as C (a u128 expression when it needs more than 64 bits)."""
    if v >> 64:
        return f"((((u128)0x{v >> 64:X}ULL) << 64) | 0x{v & 0xFFFFFFFFFFFFFFFF:X}ULL)"
    return f"{v}ULL"


def split(v: int, w: int) -> list[int]:
    """A key or action-data value of width w as the u64 words the C index holds (two for w > 64, high first)."""
    if w > 64:
        return [(v >> 64) & 0xFFFFFFFFFFFFFFFF, v & 0xFFFFFFFFFFFFFFFF]
    return [v & 0xFFFFFFFFFFFFFFFF]


def words(w: int) -> int:
    return 2 if w > 64 else 1


TYPEDEF = "typedef unsigned __int128 u128;"
HELPERS = r"""
static inline u128 p4n_get128(const uint8_t *p, int bit, int w) {
    return ((u128)p4n_get(p, bit, w - 64) << 64) | p4n_get(p, bit + w - 64, 64);
}
static inline void p4n_set128(uint8_t *p, int bit, int w, u128 x) {
    p4n_set(p, bit, w - 64, (u64)(x >> 64)); p4n_set(p, bit + w - 64, 64, (u64)x);
}
static inline void p4n_put128(p4n_pack *p, u128 x, int w) { p4n_put(p, (u64)(x >> 64), w - 64); p4n_put(p, (u64)x, 64); }
static inline u128 p4n_shl128(u128 a, u128 b, int w) {
    return b < (u128)w ? (a << b) & (w >= 128 ? ~(u128)0 : ((((u128)1) << w) - 1)) : 0;
}
static inline u128 p4n_shr128(u128 a, u128 b, int w) { return b < (u128)w ? a >> b : 0; }
"""

_WIDE_MEMBER = re.compile(r"^\s*u128 \*?\w+;\n", re.M)


def cdef_view(decl: str) -> str:
    """One struct declaration as cffi reads it: wide members left out, the struct then partial (`...;`)."""
    if "u128" not in decl:
        return decl
    body, _, tail = _WIDE_MEMBER.sub("", decl).rpartition("\n}")
    return body + "\n    ...;\n}" + tail
