"""ethlab's trace format: one training step as a list of collectives, replayable for several iterations.

YAML or JSON, documented in docs/traffic.md:

    name: tp2-dp2-step
    iterations: 3
    world: 4                      # job ranks 0..world-1 (mapped onto endpoint ids at replay time)
    defaults: {algorithm: ring, slices: 1, planes: 1}
    collectives:
      - name: tp_fwd
        op: all_gather
        groups: [[0, 1], [2, 3]]  # one instance per group, running side by side ("group": one list; "all")
        size: 1MiB                # bytes, or with K/M/G (1000) or KiB/MiB/GiB (1024)
      - name: dp_grad
        op: all_reduce
        groups: [[0, 2], [1, 3]]
        size: 4MiB
        after: [tp_fwd]           # starts when these are done (each instance waits for the instances whose
        gap_s: 0.001              # groups share a rank with its own); gap_s = compute time in between
        start_s: 0.0              # never earlier than this after the run starts
        params: {slices: 2}       # passed to the algorithm (skew, phase, microbatches, root, sink, ...)

Iteration i+1 starts when iteration i has finished (a step barrier), after `iteration_gap_s`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from p4exec.textfile import read_user_text
from traffic.collectives import accepted_params, canonical, make_schedule
from traffic.records import PlannedCollective

_UNITS = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "ki": 2**10, "mi": 2**20, "gi": 2**30}


class TraceError(ValueError):
    """The trace file is not valid; the message names the entry."""


def parse_size(value: int | float | str) -> int:
    """`4096`, `"4KiB"`, `"1.5M"`, `"2 GB"` -> bytes."""
    if isinstance(value, bool):
        raise TraceError(f"bad size {value!r}")
    if isinstance(value, int | float):
        return int(value)
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([kKmMgG]i?)?[bB]?\s*", str(value))
    if not m:
        raise TraceError(f"bad size {value!r}")
    return int(float(m.group(1)) * _UNITS[(m.group(2) or "").lower()])


@dataclass
class TraceCollective:
    name: str
    op: str
    groups: list[list[int]]
    size: int
    algorithm: str | None = None
    after: list[str] = field(default_factory=list)
    gap_s: float = 0.0
    start_s: float = 0.0
    params: dict = field(default_factory=dict)


@dataclass
class Trace:
    name: str
    world: int
    collectives: list[TraceCollective]
    iterations: int = 1
    iteration_gap_s: float = 0.0

    # ------------------------------------------------------------------ replay
    def plan(self, endpoints: Sequence[int] | None = None) -> list[PlannedCollective]:
        """Expand into the engine's planned collectives; job rank i runs on endpoints[i]."""
        eps = list(range(self.world)) if endpoints is None else list(endpoints)
        if len(eps) < self.world:
            raise TraceError(f"trace {self.name!r} needs {self.world} endpoints, got {len(eps)}")
        out: list[PlannedCollective] = []
        prev_iter: list[tuple[str, int]] = []
        for it in range(self.iterations):
            this_iter: list[tuple[str, int]] = []
            inst: dict[str, list[tuple[str, set[int]]]] = {}
            for c in self.collectives:
                names = [c.name if len(c.groups) == 1 else f"{c.name}[{k}]" for k in range(len(c.groups))]
                inst[c.name] = [(nm, set(g)) for nm, g in zip(names, c.groups, strict=True)]
                for k, group in enumerate(c.groups):
                    sched = make_schedule(c.op, [eps[r] for r in group], c.size, c.algorithm, **c.params)
                    after: list[tuple[str, int]] = []
                    for dep in c.after:
                        mine = [(nm, it) for nm, ranks in inst[dep] if ranks & set(group)]
                        after += mine or [(nm, it) for nm, _ in inst[dep]]
                    delay = c.gap_s
                    if not after and prev_iter:
                        after, delay = list(prev_iter), c.gap_s + self.iteration_gap_s
                    out.append(PlannedCollective(names[k], it, sched, c.start_s, tuple(after), delay))
                    this_iter.append((names[k], it))
            prev_iter = this_iter
        return out

    # ------------------------------------------------------------------ I/O
    def to_dict(self) -> dict:
        return {"name": self.name, "world": self.world, "iterations": self.iterations,
                "iteration_gap_s": self.iteration_gap_s,
                "collectives": [{"name": c.name, "op": c.op, "groups": c.groups, "size": c.size,
                                 **({"algorithm": c.algorithm} if c.algorithm else {}),
                                 **({"after": c.after} if c.after else {}),
                                 **({"gap_s": c.gap_s} if c.gap_s else {}),
                                 **({"start_s": c.start_s} if c.start_s else {}),
                                 **({"params": c.params} if c.params else {})} for c in self.collectives]}

    def dump(self, path: str | Path) -> None:
        p = Path(path)
        text = (json.dumps(self.to_dict(), indent=2) + "\n" if p.suffix == ".json"
                else yaml.safe_dump(self.to_dict(), sort_keys=False))
        p.write_text(text)


def _groups(entry: dict, world: int, where: str) -> list[list[int]]:
    if "groups" in entry and "group" in entry:
        raise TraceError(f"{where}: give either group or groups")
    raw = entry.get("groups", [entry.get("group", "all")])
    groups = []
    for g in raw:
        g = list(range(world)) if g == "all" else g
        if not isinstance(g, list) or not all(isinstance(r, int) and 0 <= r < world for r in g):
            raise TraceError(f"{where}: group {g!r} must list ranks in 0..{world - 1}")
        if len(set(g)) != len(g) or len(g) < 2:
            raise TraceError(f"{where}: group {g!r} needs at least two distinct ranks")
        groups.append(g)
    return groups


def from_dict(doc: dict) -> Trace:
    """Validate a parsed trace document and build the Trace (errors name the offending entry)."""
    if not isinstance(doc, dict) or "collectives" not in doc:
        raise TraceError("a trace is a mapping with a 'collectives' list")
    world = doc.get("world")
    if world is None:
        ranks = [r for c in doc["collectives"] for g in c.get("groups", [c.get("group", [])])
                 if isinstance(g, list) for r in g]
        world = max(ranks) + 1 if ranks else 0
    if not isinstance(world, int) or world < 2:
        raise TraceError("world must be an integer >= 2")
    defaults = dict(doc.get("defaults") or {})
    d_algo = defaults.pop("algorithm", None)
    seen: set[str] = set()
    out: list[TraceCollective] = []
    for i, entry in enumerate(doc["collectives"]):
        where = f"collectives[{i}]"
        if not isinstance(entry, dict) or "op" not in entry or "size" not in entry:
            raise TraceError(f"{where}: needs at least 'op' and 'size'")
        name = str(entry.get("name", f"c{i}"))
        if name in seen:
            raise TraceError(f"{where}: duplicate name {name!r}")
        try:
            op = canonical(entry["op"])
        except ValueError as e:
            raise TraceError(f"{where}: {e}") from None
        after = entry.get("after", [])
        after = [after] if isinstance(after, str) else list(after)
        for dep in after:
            if dep not in seen:
                raise TraceError(f"{where}: 'after' names {dep!r}, which is not an earlier collective")
        algorithm = entry.get("algorithm", d_algo if op == "all_reduce" else None)
        try:
            accepted = accepted_params(op, algorithm)
        except ValueError as e:
            raise TraceError(f"{where}: {e}") from None
        params = {**{k: v for k, v in defaults.items() if k in accepted}, **(entry.get("params") or {})}
        if op == "all_to_all" and str(entry["op"]).lower() == "moe":
            params.setdefault("phase", "both")
            params.setdefault("skew", 1.0)
        out.append(TraceCollective(name, op, _groups(entry, world, where), parse_size(entry["size"]),
                                   algorithm,
                                   after, float(entry.get("gap_s", 0.0)), float(entry.get("start_s", 0.0)),
                                   params))
        seen.add(name)
    trace = Trace(str(doc.get("name", "trace")), world, out, int(doc.get("iterations", 1)),
                  float(doc.get("iteration_gap_s", 0.0)))
    try:
        trace.plan()  # builds every schedule once: bad parameters fail here, with the entry's name
    except ValueError as e:
        raise TraceError(f"trace {trace.name!r}: {e}") from None
    return trace


def load(path: str | Path) -> Trace:
    """Read a trace from YAML or JSON (by content; JSON is YAML too)."""
    text = read_user_text(path, what="trace")
    return from_dict(json.loads(text) if str(path).endswith(".json") else yaml.safe_load(text))
