"""The native pipeline against the Python one (the reference), on seeded random frames: every `p4src/` program with
the entries the fabric controller installs, and every feature program of tests/p4 with its STF's entries.

    .venv/bin/python -m difftest.pipelines --frames 10000            # every program, numbers for docs/difftest.md
    .venv/bin/python -m difftest.pipelines ethplus_inc --frames 500  # one program (names: p4src stems, tests/p4 stems)

`p4src/` programs run on leaf1 of a 2-leaf, 2-spine, 2-hosts-per-leaf leaf/spine. Each pipeline gets its own
fabric: one in-process P4Runtime server per switch and the unchanged `FabricController` bringing them up over
gRPC (ECMP policy), as vfabric's control plane does; for ethplus_inc.p4 the controller's `IncJobs` then sets up
two aggregation jobs (one within leaf1, one across both leaves through a spine). `basic_l3.p4` has no fabric
application: it gets the controller's routes as /32 entries (difftest/fabric_entries.py). Frames come from
difftest/frames.py (the project's scapy layers: ETH+, probes, RoCEv2, ARP, packet-out, INC, malformed ones).
Feature programs get mutations of their STF packets and random bytes, after the STF's entries, clone sessions,
multicast groups and register writes.

Each frame goes through both pipelines at the same virtual time (seeded gaps, so flowlet and timeout state
moves); compared per frame: the output packets with their ports, and the drops with their reasons (the pipeline's
counted outcomes); after the run every register cell, indexed counter cell, direct counter of every entry and
pending digest. With `batch`, the native side takes the frames `batch` at a time through `process_batch` (one call
into C) while Python goes frame by frame.
"""
from __future__ import annotations

import argparse
import logging
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
P4SRC = ("basic_l3", "ethplus", "ethplus_inc")
FEATURES = ROOT / "tests" / "p4"
SWITCH = "leaf1"
# (job id, member endpoints, slots): job 1 within leaf1 (it aggregates alone), job 2 across both leaves (leaf1
# sums its hosts and sends up to a spine, which returns the result)
INC_JOBS = ((1, (1, 2), 4), (2, (1, 2, 3, 4), 4))
GAPS_US = (0, 0, 1, 3, 20, 150, 2000)  # virtual time between frames
DETAILS = 10


@dataclass
class Result:
    program: str
    frames: int
    seed: int
    batch: int = 0
    native: bool = True               # False: the native pipeline declined the program (ran in Python)
    why_python: str = ""
    kinds: Counter[str] = field(default_factory=Counter)
    outputs: int = 0
    drops: Counter[str] = field(default_factory=Counter)   # frames by what Python counted (see _why)
    frame_diffs: int = 0
    state_diffs: int = 0
    cells: int = 0                    # register/counter cells compared (non-zero ones among them: `live`)
    live: int = 0
    details: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def agree(self) -> bool:
        return not self.frame_diffs and not self.state_diffs

    def line(self) -> str:
        mode = f"batches of {self.batch}" if self.batch else "frame by frame"
        drops = ", ".join(f"{k} {v}" for k, v in sorted(self.drops.items())) or "none"
        head = (f"{self.program}: {self.frames} frames ({mode}, seed {self.seed}) -> {self.outputs} outputs; "
                f"drops {drops}; {self.cells} state cells ({self.live} non-zero); {self.frame_diffs} frame "
                f"difference(s), {self.state_diffs} state difference(s); {self.seconds:.2f} s")
        if not self.native:
            head += f" [native declined, both ran Python: {self.why_python}]"
        return "\n".join([head, *("  " + d for d in self.details)])


# ---------------------------------------------------------------------------------------------- the switches

@contextmanager
def fabric_switch(program: str, kind: str, build_dir: Path) -> Iterator[Any]:
    """leaf1's loaded program on pipeline `kind`, with the entries the fabric controller wrote to it."""
    from controller.artifacts import build_artifacts
    from controller.client import SwitchConnection
    from controller.fabric import FabricController
    from controller.policies import make_policy
    from difftest.fabric_entries import basic_l3_updates, small_fabric
    from p4exec.native.select import pipeline_choice
    from p4exec.p4runtime.server import P4RuntimeServer
    from p4exec.switch.inprocess import InProcessDevice

    view = small_fabric()
    artifacts = build_artifacts(ROOT / "p4src" / f"{program}.p4", "p4exec", build_dir)
    names = [SWITCH] if program == "basic_l3" else sorted(n for n, node in view.topo.nodes.items() if node.is_switch)
    devices = {n: InProcessDevice(device_id=view.topo.nodes[n].device_id or 0, cpu_port=None) for n in names}
    servers = {n: P4RuntimeServer(d, "127.0.0.1:0", max_workers=4, ticker=False).start() for n, d in devices.items()}
    closers: list[Callable[[], None]] = [partial(s.stop, grace=0.2) for s in servers.values()]
    try:
        with pipeline_choice(kind):
            if program == "basic_l3":
                conn = SwitchConnection(servers[SWITCH].address, device_id=1, p4info=artifacts.p4info, timeout=60.0)
                conn.connect()
                closers.insert(0, conn.close)
                conn.set_pipeline(artifacts.device_config, artifacts.p4info)
                conn.write(basic_l3_updates(conn, view))
            else:
                ctl = FabricController(view.topo, {n: s.address for n, s in servers.items()}, artifacts,
                                       make_policy("ecmp"), watch_switches=False, port_poll_s=None, workers=4)
                closers.insert(0, ctl.close)
                ctl.start()
                if program == "ethplus_inc":
                    for job, members, slots in INC_JOBS:
                        ctl.inc.setup(job, members, slots=slots)
        program_ = devices[SWITCH].program
        assert program_ is not None and program_.loaded is not None
        yield program_.loaded
    finally:
        for close in closers:
            try:
                close()
            except Exception:  # noqa: BLE001 - teardown goes on
                pass


def inc_jobs_on_switch() -> tuple[tuple[int, int], ...]:
    return tuple((job, slots) for job, _members, slots in INC_JOBS)


# ---------------------------------------------------------------------------------------------- state

def state_cells(state: Any) -> dict[str, list[Any]]:
    """Every register and counter cell, every entry's direct counter and every pending digest, by name."""
    cells: dict[str, list[Any]] = {f"register {k}": list(r.values) for k, r in state.registers.items()}
    for k, c in state.counters.items():
        cells[f"counter {k}"] = list(zip(c.packets, c.bytes, strict=True))
    for k, t in state.tables.items():
        if t.direct_counter is not None:
            cells[f"direct counter {k}"] = [(e.packet_count, e.byte_count) for e in t.entries()]
    for k, d in state.digests.items():
        cells[f"digest {k}"] = list(d.pending)
    return cells


def compare_state(py: Any, nat: Any, res: Result) -> None:
    a, b = state_cells(py.state), state_cells(nat.state)
    for name in sorted(set(a) | set(b)):
        x, y = a.get(name, []), b.get(name, [])
        res.cells += len(x)
        res.live += sum(1 for v in x if v not in (0, (0, 0)))
        bad = [i for i in range(max(len(x), len(y))) if (x[i] if i < len(x) else None) != (y[i] if i < len(y) else None)]
        res.state_diffs += len(bad)
        for i in bad[:3]:
            if len(res.details) < DETAILS * 2:
                res.details.append(f"{name}[{i}]: python {x[i] if i < len(x) else None} "
                                   f"native {y[i] if i < len(y) else None}")


# ---------------------------------------------------------------------------------------------- the run

def _delta(now: Counter[str], before: dict[str, int]) -> dict[str, int]:
    return {k: v - before.get(k, 0) for k, v in now.items() if v != before.get(k, 0)}


def drive(py: Any, nat: Any, frames: list[tuple[str, int, bytes]], times: list[int], res: Result,
          batch: int = 0) -> None:
    """Frames through both loaded programs; per frame (or per batch) outputs and counted outcomes compared."""
    ps, ns = py.pipeline.stats, nat.pipeline.stats
    if batch:
        for s in range(0, len(frames), batch):
            chunk = frames[s:s + batch]
            want = [(s + j, port, data) for j, (_k, p, d) in enumerate(chunk) for port, data in py.run(p, d, times[s + j])]
            got = [(s + i, port, data) for i, port, data in nat.pipeline.process_batch(
                [p for _k, p, _d in chunk], [d for _k, _p, d in chunk], times[s:s + len(chunk)])]
            res.outputs += len(want)
            same_stats = {k: v for k, v in ps.items() if v} == {k: v for k, v in ns.items() if v}
            if want != got or not same_stats:
                res.frame_diffs += 1
                if len(res.details) < DETAILS:
                    first = next((i for i, (x, y) in enumerate(zip(want, got, strict=False)) if x != y),
                                 min(len(want), len(got)))
                    res.details.append(f"batch at frame {s}: output #{first}: python {want[first:first + 1]} "
                                       f"native {got[first:first + 1]}; stats python {dict(ps)} native {dict(ns)}")
        res.drops.update({k: v for k, v in ps.items() if v})  # the pipeline's own counts, over all batches
        return
    for i, (kind, port, data) in enumerate(frames):
        bp, bn = dict(ps), dict(ns)
        a = py.run(port, data, times[i])
        wa = _why(a, _delta(ps, bp), py.pipeline.last_malformed)
        b = nat.run(port, data, times[i])
        wb = _why(b, _delta(ns, bn), nat.pipeline.last_malformed)
        res.outputs += len(a)
        res.drops.update(wa)
        if a != b or wa != wb:
            res.frame_diffs += 1
            if len(res.details) < DETAILS:
                res.details.append(f"frame {i} ({kind}, port {port}, {data[:40].hex()}...): python "
                                   f"{[(p, d[:40].hex()) for p, d in a]} {wa}; native "
                                   f"{[(p, d[:40].hex()) for p, d in b]} {wb}")


def _why(outputs: list[Any], delta: dict[str, int], malformed: bool) -> list[str]:
    """What the pipeline counted for one frame (faults, asserts, loop drops), and for a frame that left
    nowhere whether the parser rejected it (`malformed`: the switch counts it so) or the program dropped it."""
    why = sorted(k for k in delta if k != "dropped")
    if not outputs:
        why.append("malformed" if malformed else "dropped by the program")
    return why


def _times(rng: random.Random, n: int) -> list[int]:
    t, out = 1_000, []
    for _ in range(n):
        t += rng.choice(GAPS_US)
        out.append(t)
    return out


def _native_reason(loaded: Any) -> str:
    from p4exec.native.pipeline import NativePipeline
    from p4exec.native.select import native_reason

    if isinstance(loaded.pipeline, NativePipeline):
        return ""
    return native_reason(loaded.compiled) or f"pipeline {type(loaded.pipeline).__name__}"


def run_p4src(program: str, frames: int, seed: int = 1, batch: int = 0,
              build_dir: Path = ROOT / "build" / "difftest-pipelines") -> Result:
    from difftest.fabric_entries import small_fabric
    from difftest.frames import INC_KINDS, KINDS, FrameGen

    if program not in P4SRC:
        raise ValueError(f"unknown p4src program {program!r} (one of {', '.join(P4SRC)})")
    view = small_fabric()
    inc = program == "ethplus_inc"
    gen = FrameGen(view.topo, SWITCH, view.ports, seed, INC_KINDS if inc else KINDS,
                   inc_jobs_on_switch() if inc else ())
    fs = [(f.kind, f.port, f.data) for f in gen.frames(frames)]
    res = Result(program, frames, seed, batch, kinds=Counter(k for k, _p, _d in fs))
    times = _times(random.Random(seed), frames)
    with fabric_switch(program, "python", build_dir) as py, fabric_switch(program, "native", build_dir) as nat:
        why = _native_reason(nat)
        res.native, res.why_python = not why, why
        if not _native_reason(py):
            raise AssertionError("the Python side runs the native pipeline")
        start = time.monotonic()
        drive(py, nat, fs, times, res, batch)
        res.seconds = time.monotonic() - start
        compare_state(py, nat, res)
    return res


# ---------------------------------------------------------------------------------------------- feature programs

# A program that loops forever on some inputs, with the rewrite that keeps frames out of that case:
# 77_for_loops counts to its first byte with an 8-bit `i <= n`, which never ends for n = 255 (in P4 as on both
# pipelines).
ENDLESS = {"77_for_loops": lambda d: (bytes([min(d[0], 254)]) + d[1:]) if d else d}


def feature_programs() -> list[Path]:
    return sorted(FEATURES.glob("[0-9]*_*.p4"))


def feature_frames(stf: str, seed: int, n: int) -> list[tuple[str, int, bytes]]:
    """n frames: the STF's packets with a few bytes changed or cut (half), random bytes (half); any of the
    ports the corpus uses."""
    rng = random.Random(seed)
    base = [bytes.fromhex(re.sub(r"[^0-9a-fA-F]", "", h))
            for h in re.findall(r"^packet\s+\d+\s+([0-9a-fA-F \t*]+)$", stf, re.M)] or [b""]
    out = []
    for _ in range(n):
        kind, data = mutate(rng, base)
        out.append((kind, rng.choice([0, 1, 2, 3, 4, 7, 255]), data))
    return out


def mutate(rng: random.Random, base: list[bytes]) -> tuple[str, bytes]:
    """One frame to try: half the time one of `base` with up to three bytes changed (and one in five of
    those cut short), else up to 80 random bytes; with its kind ("stf-mutated" or "random")."""
    if rng.random() < 0.5:
        d = bytearray(rng.choice(base))
        for _ in range(rng.randint(0, 3)):
            if d:
                d[rng.randrange(len(d))] = rng.randrange(256)
        return "stf-mutated", bytes(d[:rng.randint(0, len(d))] if rng.random() < 0.2 else d)
    return "random", rng.randbytes(rng.randint(0, 80))


def run_feature(path: Path, frames: int, seed: int = 1, batch: int = 0) -> Result | None:
    """None for a negative program (one the compiler must refuse)."""
    from p4exec.compiler.program import compile_file
    from p4exec.errors import P4Error
    from p4exec.harness import Harness
    from p4exec.stf import parse as S
    from p4exec.stf.parse import parse_stf_file
    from p4exec.stf.runner import StfRunner
    from p4exec.v1model.loader import load

    try:
        prog = compile_file(str(path))
    except P4Error:
        return None
    stf = path.with_suffix(".stf")
    fs = feature_frames(stf.read_text() if stf.is_file() else "", seed + len(path.stem), frames)
    rewrite = ENDLESS.get(path.stem)
    if rewrite is not None:
        fs = [(k, p, rewrite(d)) for k, p, d in fs]
    res = Result(path.stem, frames, seed, batch, kinds=Counter(k for k, _p, _d in fs))
    py, nat = load(prog, seed=3, pipeline="python"), load(prog, seed=3, pipeline="native")
    why = _native_reason(nat)
    res.native, res.why_python = not why, why
    setup_kinds = (S.AddEntry, S.SetDefault, S.MirroringAdd, S.MirroringAddMc, S.McMgrpCreate, S.McNodeCreate,
                   S.McNodeUpdate, S.McNodeAssociate, S.RegisterWrite, S.CounterWrite)
    if stf.is_file():
        setup: list[S.Stmt] = [st for st in parse_stf_file(str(stf)) if isinstance(st, setup_kinds)]
        for lp in (py, nat):
            StfRunner(Harness(lp), str(stf)).run(setup)
    start = time.monotonic()
    drive(py, nat, fs, _times(random.Random(seed), frames), res, batch if res.native else 0)
    res.seconds = time.monotonic() - start
    compare_state(py, nat, res)
    return res


# ---------------------------------------------------------------------------------------------- CLI

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m difftest.pipelines", description=__doc__.splitlines()[0])
    ap.add_argument("programs", nargs="*", help="p4src stems and/or tests/p4 stems (default: all of both)")
    ap.add_argument("--frames", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--batch", type=int, default=0, help="native side in process_batch calls of this many frames")
    ap.add_argument("--p4src-only", action="store_true")
    ap.add_argument("--log-faults", action="store_true",
                    help="print the pipelines' per-packet warnings (asserts, run-time faults; counted either way)")
    args = ap.parse_args(argv)
    from p4exec.native.build import compiler_available

    if not args.log_faults:
        logging.getLogger("p4exec").setLevel(logging.ERROR)

    if compiler_available() is None:
        print("python -m difftest.pipelines: no C compiler (set CC or install cc): nothing native to compare",
              file=sys.stderr)
        return 2
    features = {p.stem: p for p in feature_programs()}
    names = args.programs or [*P4SRC, *([] if args.p4src_only else features)]
    unknown = [n for n in names if n not in P4SRC and n not in features]
    if unknown:
        print(f"python -m difftest.pipelines: unknown program(s) {', '.join(unknown)}", file=sys.stderr)
        return 2
    total = Counter[str]()
    python_only = []
    for name in names:
        try:
            res = run_p4src(name, args.frames, args.seed, args.batch) if name in P4SRC else \
                run_feature(features[name], args.frames, args.seed, args.batch)
        except Exception as e:  # noqa: BLE001 - one program that cannot run must not hide the others
            print(f"{name}: could not run: {type(e).__name__}: {e}", flush=True)
            total["errors"] += 1
            continue
        if res is None:
            print(f"{name}: a negative program (the compiler refuses it), nothing to run", flush=True)
            continue
        print(res.line(), flush=True)
        total["programs"] += 1
        total["frames"] += res.frames
        total["differ"] += not res.agree
        if not res.native:
            python_only.append(name)
    print(f"{total['programs']} programs, {total['frames']} frames, {total['differ']} with differences, "
          f"{total['errors']} could not run; native declined (compared Python with Python): "
          f"{len(python_only)} {', '.join(python_only)}")
    return 0 if not total["differ"] and not total["errors"] else 1


if __name__ == "__main__":
    sys.exit(main())
