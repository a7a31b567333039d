"""Double binary tree all-reduce (NCCL's tree algorithm).

Two binary trees span the ranks; each carries half of the buffer, pipelined in `slices`. A node forwards a
slice up (reducing) once all its children's copies of that slice have arrived; the root then sends the
reduced slice down and every node forwards it to its children as soon as it arrives. The second tree is the
first one mirrored (even n) or shifted by one (odd n), so a leaf of one tree is an inner node of the other
and both halves use every rank's send and receive bandwidth.
"""

from __future__ import annotations

from collections.abc import Sequence

from traffic.schedule import COPY, REDUCE, Schedule, ScheduleBuilder, check_ranks, split_bytes


def binary_tree(n: int) -> tuple[int, dict[int, int], dict[int, list[int]]]:
    """Balanced in-order binary tree over positions 0..n-1: (root, parent, children)."""
    parent: dict[int, int] = {}
    children: dict[int, list[int]] = {i: [] for i in range(n)}

    def build(lo: int, hi: int, up: int | None) -> int | None:
        if lo >= hi:
            return None
        mid = (lo + hi) // 2
        if up is not None:
            parent[mid] = up
            children[up].append(mid)
        build(lo, mid, mid)
        build(mid + 1, hi, mid)
        return mid

    root = build(0, n, None)
    assert root is not None
    return root, parent, children


def second_tree(n: int) -> tuple[int, dict[int, int], dict[int, list[int]]]:
    """The complementary tree: mirror for even n, shift by one for odd n (as NCCL pairs its trees)."""
    root, parent, children = binary_tree(n)
    relabel = (lambda p: n - 1 - p) if n % 2 == 0 else (lambda p: (p + 1) % n)
    return (relabel(root), {relabel(c): relabel(p) for c, p in parent.items()},
            {relabel(p): [relabel(c) for c in cs] for p, cs in children.items()})


def _postorder(root: int, children: dict[int, list[int]]) -> list[int]:
    out: list[int] = []
    stack = [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            out.append(node)
            continue
        stack.append((node, True))
        for c in children[node]:
            stack.append((c, False))
    return out


def double_binary_tree_all_reduce(ranks: Sequence[int], size: int, slices: int = 1,
                                  planes: int = 1) -> Schedule:
    ranks = check_ranks(ranks)
    n = len(ranks)
    if slices < 1:
        raise ValueError("slices must be >= 1")
    halves = split_bytes(size, 2)
    chunk_bytes = [b for h in halves for b in split_bytes(h, slices)]
    b = ScheduleBuilder(chunk_bytes, planes)
    for t, (root, parent, children) in enumerate((binary_tree(n), second_tree(n))):
        order = _postorder(root, children)
        for s in range(slices):
            c = t * slices + s
            plane = c % planes
            up: dict[int, int] = {}
            for v in order:
                if v == root:
                    continue
                deps = [up[ch] for ch in children[v]]
                up[v] = b.add(ranks[v], ranks[parent[v]], [c], REDUCE, deps, step=0, plane=plane)
            down_into: dict[int, int] = {}
            for v in reversed(order):  # pre-order: parents before children
                deps = [up[ch] for ch in children[v]] if v == root else [down_into[v]]
                for ch in children[v]:
                    down_into[ch] = b.add(ranks[v], ranks[ch], [c], COPY, deps, step=1, plane=plane)
    nch = len(chunk_bytes)
    return b.build("all_reduce", "double_binary_tree", ranks, size, [None] * nch, [None] * nch,
                   slices=slices, planes=planes)
