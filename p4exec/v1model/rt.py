"""Support code that p4exec's generated Python uses at packet time (kept small: the hot paths are inlined)."""
from __future__ import annotations


class P4Exit(Exception):
    """`exit` statement: ends the top-level control."""


class ParserErr(Exception):
    """Raised inside a generated parser; carries the P4 error code."""

    def __init__(self, code: int):
        self.code = code
        self.off = None        # set by a sub-parser: how far it got


class P4AssertError(Exception):
    """`assert`/`assume` failed at packet time."""


class PacketCtx:
    """Per-packet side-band state of the v1model externs (what BMv2 keeps in intrinsic metadata)."""

    __slots__ = ("sm", "now", "pkt_len", "payload", "clone", "resubmit", "recirc", "digests", "truncate", "logs",
                 "assert_failed", "meta", "dm_entry")

    def __init__(self):
        self.reset(None, 0, 0)

    def reset(self, sm, now, pkt_len):
        self.sm = sm
        self.now = now
        self.pkt_len = pkt_len
        self.payload = b""
        self.clone = None         # (type 0 I2E / 1 E2E, session, field-list index or preserve fn)
        self.resubmit = None      # preserve fn or field-list index (resubmit requested)
        self.recirc = None
        self.digests = None       # list of (digest name, values tuple)
        self.truncate = None
        self.logs = None
        self.assert_failed = False
        self.dm_entry = None


class Stack:
    """A header stack: `h` holds the element objects, `nxt` the next index."""

    __slots__ = ("h", "nxt", "size")

    def __init__(self, factory, size):
        self.h = [factory() for _ in range(size)]
        self.nxt = 0
        self.size = size

    def _set(self, other):
        for a, b in zip(self.h, other.h, strict=True):
            a._set(b)
        self.nxt = other.nxt

    def _copy(self):
        s = Stack.__new__(Stack)
        s.h = [x._copy() for x in self.h]
        s.nxt = self.nxt
        s.size = self.size
        return s

    def _eq(self, other):
        return all(a._eq(b) for a, b in zip(self.h, other.h, strict=True))

    def push_front(self, n):
        h = self.h
        size = self.size
        for i in range(size - 1, -1, -1):
            if i >= n:
                h[i]._set(h[i - n])
            else:
                h[i]._setinvalid()
        self.nxt = min(self.nxt + n, size)

    def pop_front(self, n):
        h = self.h
        size = self.size
        for i in range(size):
            if i + n < size:
                h[i]._set(h[i + n])
            else:
                h[i]._setinvalid()
        self.nxt = max(self.nxt - n, 0)


def stack_last(stk: Stack):
    """`.last` of a header stack; an empty stack is StackOutOfBounds (error code 3)."""
    if stk.nxt == 0:
        raise ParserErr(3)
    return stk.h[stk.nxt - 1]


def shl(a: int, b: int, width: int, mask: int) -> int:
    return (a << b) & mask if b < width else 0


def shl_signed(a: int, b: int, width: int) -> int:
    if b >= width:
        return 0
    half = 1 << (width - 1)
    return (((a << b) + half) & ((1 << width) - 1)) - half


def sat_add_signed(a, b, width):
    lo = -(1 << (width - 1))
    hi = (1 << (width - 1)) - 1
    r = a + b
    return hi if r > hi else lo if r < lo else r


def format_log(msg: str, values) -> str:
    out = []
    parts = msg.split("{}")
    vals = list(values)
    for i, p in enumerate(parts):
        out.append(p)
        if i < len(parts) - 1:
            out.append(str(vals[i]) if i < len(vals) else "{}")
    return "".join(out)


def csum16_int(v: int) -> int:
    """csum16 (RFC 1071) of the big-endian bytes of `v` (a whole number of 16-bit words), on the integer:
    2**16 = 1 (mod 0xFFFF), so the words' one's complement sum s is v mod 0xFFFF taken in 1..0xFFFF
    (0 only when v is 0), and the checksum is ~s & 0xFFFF. No bytes are built."""
    return 0xFFFE - (v - 1) % 0xFFFF if v else 0xFFFF
