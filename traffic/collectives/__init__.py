"""Collective algorithms as schedules, and one entry point that picks one by name.

`make_schedule("all_reduce", ranks, size, algorithm="ring", slices=2, planes=4)` is what the trace replayer
and the CLI call; the per-family modules hold the algorithms.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from functools import partial

from traffic.collectives.alltoall import all_to_all, pairwise_all_to_all
from traffic.collectives.inc import inc_all_reduce
from traffic.collectives.p2p import broadcast, incast, pipeline_sendrecv
from traffic.collectives.rhd import recursive_halving_doubling_all_reduce
from traffic.collectives.ring import ring_all_gather, ring_all_reduce, ring_reduce_scatter
from traffic.collectives.tree import double_binary_tree_all_reduce
from traffic.schedule import Schedule

#: pattern -> algorithm -> generator. The first algorithm listed is the default.
PATTERNS: dict[str, dict[str, Callable[..., Schedule]]] = {
    "all_reduce": {"ring": ring_all_reduce, "tree": double_binary_tree_all_reduce,
                   "rhd": recursive_halving_doubling_all_reduce, "inc": inc_all_reduce},
    "reduce_scatter": {"ring": ring_reduce_scatter},
    "all_gather": {"ring": ring_all_gather},
    "all_to_all": {"direct": all_to_all, "pairwise": pairwise_all_to_all},
    "broadcast": {"ring": partial(broadcast, algorithm="ring"),
                  "binomial": partial(broadcast, algorithm="binomial")},
    "sendrecv": {"gpipe": pipeline_sendrecv},
    "incast": {"direct": incast},
}

ALIASES = {"allreduce": "all_reduce", "reducescatter": "reduce_scatter", "allgather": "all_gather",
           "alltoall": "all_to_all", "moe": "all_to_all", "pipeline": "sendrecv", "p2p": "sendrecv",
           "bcast": "broadcast"}


def canonical(pattern: str) -> str:
    """Normalise a pattern name ("AllReduce", "all-reduce", "allreduce" -> "all_reduce")."""
    key = pattern.strip().lower().replace("-", "_")
    key = ALIASES.get(key.replace("_", ""), key)
    if key not in PATTERNS:
        raise ValueError(f"unknown pattern {pattern!r}; known: {', '.join(sorted(PATTERNS))}")
    return key


def make_schedule(pattern: str, ranks: Sequence[int], size: int, algorithm: str | None = None,
                  **params) -> Schedule:
    """Build the schedule of one collective. Extra params go to the algorithm (slices, planes, skew, ...)."""
    key = canonical(pattern)
    if pattern.strip().lower() == "moe":
        params.setdefault("phase", "both")
        params.setdefault("skew", 1.0)
    gen = generator(key, algorithm)
    unknown = set(params) - accepted_params(key, algorithm)
    if unknown:
        raise ValueError(f"{key}: unknown parameter(s) {', '.join(sorted(unknown))}; "
                         f"known: {', '.join(sorted(accepted_params(key, algorithm)))}")
    return gen(ranks, size, **params)


def generator(pattern: str, algorithm: str | None = None) -> Callable[..., Schedule]:
    algos = PATTERNS[canonical(pattern)]
    algo = algorithm or next(iter(algos))
    if algo not in algos:
        raise ValueError(f"{pattern} has no algorithm {algo!r}; known: {', '.join(algos)}")
    return algos[algo]


def accepted_params(pattern: str, algorithm: str | None = None) -> set[str]:
    """Keyword parameters the algorithm takes besides ranks and size (for filtering shared defaults)."""
    sig = inspect.signature(generator(pattern, algorithm))
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return {n for n, p in sig.parameters.items()
            if n not in ("ranks", "size", "algorithm") and p.kind in kinds and p.default is not p.empty}


__all__ = ["PATTERNS", "accepted_params", "canonical", "generator", "make_schedule", "all_to_all", "broadcast", "incast",
           "pairwise_all_to_all", "pipeline_sendrecv", "recursive_halving_doubling_all_reduce", "ring_all_gather",
           "ring_all_reduce", "ring_reduce_scatter", "double_binary_tree_all_reduce", "inc_all_reduce"]
