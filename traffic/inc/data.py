"""The vectors an INC all-reduce reduces: generated from the seed by every rank, so each rank can compute the
expected sum of any chunk locally and check what the switches sent back.

Element x of rank r is `((a_r * x + b_r) mod (2m + 1)) - m`, with a_r, b_r drawn from the seed and r and
m = the largest magnitude allowed: cheap to compute per chunk with numpy, different per rank and element,
negative and positive. The switches add 32-bit two's-complement integers and wrap on overflow, so a job
whose sum could leave the int32 range is refused here (n_ranks * m must stay below 2^31).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from traffic.inc.wire import ELEMS

INT32_MAX = 2**31 - 1


class IncDataError(ValueError):
    """Values that the 32-bit elements cannot sum exactly."""


def default_max_abs(n_ranks: int) -> int:
    return min(1_000_000, INT32_MAX // max(1, n_ranks))


class Vectors:
    """The seeded input vectors of one collective (`n_elems` int32 elements per rank)."""

    def __init__(self, ranks: Sequence[int], n_elems: int, seed: int, max_abs: int | None = None) -> None:
        self.ranks = tuple(ranks)
        self.n = len(self.ranks)
        self.n_elems = n_elems
        m = default_max_abs(self.n) if max_abs is None else int(max_abs)
        if m < 1:
            raise IncDataError(f"max_abs must be at least 1 (got {max_abs!r})")
        if self.n * m > INT32_MAX:
            raise IncDataError(f"{self.n} ranks x values up to {m} can sum to {self.n * m}, beyond the int32 "
                               f"elements the switches add (max {INT32_MAX}); use max_abs <= "
                               f"{INT32_MAX // self.n}")
        self.max_abs = m
        self.chunks = -(-n_elems // ELEMS)
        coef = [np.random.default_rng([seed, r]).integers(1, 1 << 20, 2) for r in self.ranks]
        self._a = np.array([c[0] for c in coef], dtype=np.int64)[:, None]
        self._b = np.array([c[1] for c in coef], dtype=np.int64)[:, None]
        self._expected: dict[int, np.ndarray] = {}

    def _x(self, chunk: int) -> tuple[np.ndarray, np.ndarray]:
        x = np.arange(chunk * ELEMS, (chunk + 1) * ELEMS, dtype=np.int64)
        return x, x < self.n_elems

    def chunk(self, rank_index: int, chunk: int) -> np.ndarray:
        """Rank `rank_index`'s elements of `chunk` (zeros past the end of the vector)."""
        x, valid = self._x(chunk)
        v = (self._a[rank_index] * x + self._b[rank_index]) % (2 * self.max_abs + 1) - self.max_abs
        return np.where(valid, v, 0).astype(np.int32)

    def expected(self, chunk: int) -> np.ndarray:
        """The sum over all ranks of `chunk`, computed from the seed (cached until `forget`)."""
        got = self._expected.get(chunk)
        if got is None:
            x, valid = self._x(chunk)
            v = (self._a * x + self._b) % (2 * self.max_abs + 1) - self.max_abs
            got = self._expected[chunk] = np.where(valid, v.sum(axis=0), 0).astype(np.int32)
        return got

    def forget(self, chunk: int) -> None:
        self._expected.pop(chunk, None)
