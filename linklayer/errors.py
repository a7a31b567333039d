"""Link errors: whether the n-th frame arriving on a link direction fails its FCS.

Decided by a hash of (run seed, receiving port, frame index), never by a shared random generator: the outcome
of one link's frame does not depend on what any other link did or on how events interleave, so a rerun gives
the same errors, and the emulated and virtual-time clocks apply the same rule. The hash is SplitMix64's
finaliser over a per-port key (BLAKE2b of seed and port name, stable across processes) plus the index.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

_M64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


def _mix(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


def port_key(seed: int, port: str) -> int:
    """The 64-bit key of one receiving port (e.g. "leaf1:3", "h0:1") under one run seed."""
    return int.from_bytes(hashlib.blake2b(f"{seed}|{port}".encode(), digest_size=8).digest(), "big")


class FrameErrors:
    """The FCS verdicts of one receiving port: `bad(wire_bytes)` for each arriving frame in turn.
    `probability(wire_bytes)` is the link's per-frame error probability (a constant FER, or from a BER)."""

    __slots__ = ("key", "index", "probability", "_limits")

    def __init__(self, seed: int, port: str, probability: Callable[[int], float]) -> None:
        self.key = port_key(seed, port)
        self.index = 0
        self.probability = probability
        self._limits: dict[int, int] = {}  # wire bytes -> the hash below which a frame is corrupted

    def bad(self, wire_bytes: int) -> bool:
        i = self.index
        self.index = i + 1
        limit = self._limits.get(wire_bytes)
        if limit is None:
            limit = self._limits[wire_bytes] = int(self.probability(wire_bytes) * (1 << 64))
        if not limit:
            return False
        return _mix((self.key + (i + 1) * _GOLDEN) & _M64) < limit
