"""Import SimAI/AICB workload files (the ASTRA-sim text format AICB generates) as ethlab traces.

Layout, as those tools write it: line 1 names the parallelisation (e.g. HYBRID_TRANSFORMER_FWD_IN_BCKWD)
followed by `key: value` pairs (`model_parallel_NPU_group` = TP size, `ep`, `pp`, `all_gpus`, ...); line 2 is
the number of layer lines; each layer line has 12 fields: name, a reserved -1, then for the forward pass, the
input-gradient pass and the weight-gradient pass each (compute time in cycles, communication type,
communication size in bytes), and finally an update time. Communication types are ALLREDUCE, ALLGATHER,
REDUCESCATTER, ALLTOALL or NONE, optionally suffixed _EP (expert-parallel group) or _DP_EP (data-parallel
group among expert replicas); unsuffixed forward/input-gradient communication runs in the TP group, and
weight-gradient communication in the DP group.

Ranks are laid out as rank = (stage * dp + d) * tp + t. The replayed step runs the forward pass over the
layers, then the backward pass in reverse: input-gradient collectives form the critical chain, and each
layer's weight-gradient collective starts after its input gradient and overlaps with the rest, as the
frameworks overlap gradient reduction. Sizes can be scaled down (`size_scale`) and compute gaps are
`cycles x 1 ns x compute_scale` (0 drops them). Pipeline point-to-point traffic (`pp_comm`) is not imported.
"""

from __future__ import annotations

import re
from pathlib import Path

from p4exec.textfile import read_user_text
from traffic.trace import Trace, TraceCollective, TraceError

OPS = {"ALLREDUCE": "all_reduce", "ALLGATHER": "all_gather", "REDUCESCATTER": "reduce_scatter",
       "ALLTOALL": "all_to_all"}


def _header(line: str) -> tuple[str, dict[str, int]]:
    parts = line.split()
    if not parts:
        raise TraceError("SimAI workload: empty first line")
    fields = {k: int(v) for k, v in re.findall(r"(\w+):\s*(-?\d+)", line)}
    return parts[0], fields


def _layout(fields: dict[str, int], world: int | None) -> tuple[int, int, int, int, int]:
    tp = max(1, fields.get("model_parallel_NPU_group", 1))
    pp = max(1, fields.get("pp", 1))
    ep = max(1, fields.get("ep", 1))
    world = world or fields.get("all_gpus") or tp * pp
    if world % (tp * pp):
        raise TraceError(f"SimAI workload: {world} GPUs is not a multiple of tp {tp} x pp {pp}")
    dp = world // (tp * pp)
    if dp % ep and ep > 1:
        raise TraceError(f"SimAI workload: dp {dp} is not a multiple of ep {ep}")
    return world, tp, pp, dp, ep


def _groups(kind: str, phase: str, tp: int, pp: int, dp: int, ep: int) -> list[list[int]]:
    def rank(stage: int, d: int, t: int) -> int:
        return (stage * dp + d) * tp + t

    if kind == "_EP":
        return [[rank(s, b * ep + i, t) for i in range(ep)]
                for s in range(pp) for t in range(tp) for b in range(dp // ep)]
    if kind == "_DP_EP":
        return [[rank(s, d, t) for d in range(e, dp, ep)] for s in range(pp) for t in range(tp) for e in range(ep)]
    if phase == "wg" or kind == "_DP":
        return [[rank(s, d, t) for d in range(dp)] for s in range(pp) for t in range(tp)]
    return [[rank(s, d, t) for t in range(tp)] for s in range(pp) for d in range(dp)]


def _comm(token: str) -> tuple[str | None, str]:
    if token == "NONE":
        return None, ""
    for base, op in OPS.items():
        if token.startswith(base):
            suffix = token[len(base):]
            if suffix not in ("", "_EP", "_DP_EP", "_DP"):
                break
            return op, suffix
    raise TraceError(f"SimAI workload: unknown communication type {token!r}")


def parse_simai(text: str, world: int | None = None, size_scale: float = 1.0, compute_scale: float = 0.0,
                iterations: int = 1, max_layers: int | None = None, name: str = "simai") -> Trace:
    """Build a Trace from the text of a SimAI/AICB workload file."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) < 2:
        raise TraceError("SimAI workload: needs a header line and a layer count")
    _kind, fields = _header(lines[0])
    world, tp, pp, dp, ep = _layout(fields, world)
    try:
        count = int(lines[1].split()[0])
    except ValueError:
        raise TraceError(f"SimAI workload: line 2 must be the layer count, got {lines[1]!r}") from None
    layers = []
    for i, ln in enumerate(lines[2:2 + count]):
        f = ln.split()
        if len(f) != 12:
            raise TraceError(f"SimAI workload: layer line {i + 3} has {len(f)} fields, expected 12")
        layers.append(f)
    if len(layers) != count:
        raise TraceError(f"SimAI workload: {count} layers announced, {len(layers)} found")
    if max_layers is not None:
        layers = layers[:max_layers]

    out: list[TraceCollective] = []
    chain: str | None = None
    pending_gap = 0.0

    def add(lname: str, phase: str, compute: str, ctype: str, csize: str, on_chain: bool) -> str | None:
        nonlocal chain, pending_gap
        gap = int(compute) * 1e-9 * compute_scale
        op, suffix = _comm(ctype)
        size = int(int(csize) * size_scale)
        groups = [g for g in _groups(suffix, phase, tp, pp, dp, ep) if len(g) > 1]
        if op is None or size <= 0 or not groups:
            if on_chain:
                pending_gap += gap
            return None
        cname = f"{len(out)}.{lname}.{phase}"
        after = [chain] if chain else []
        out.append(TraceCollective(cname, op, groups, size, None, after, gap + (pending_gap if on_chain else 0)))
        if on_chain:
            chain, pending_gap = cname, 0.0
        return cname

    for f in layers:  # forward
        add(f[0], "fwd", f[2], f[3], f[4], True)
    for f in reversed(layers):  # backward: input gradient on the chain, weight gradient overlapped
        add(f[0], "ig", f[5], f[6], f[7], True)
        add(f[0], "wg", f[8], f[9], f[10], False)
    if not out:
        raise TraceError("SimAI workload: no communication to replay")
    return Trace(name, world, out, iterations)


def load_simai(path: str | Path, **kw) -> Trace:
    return parse_simai(read_user_text(path, what="SimAI workload"), name=Path(path).stem, **kw)
