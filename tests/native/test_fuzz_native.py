"""Programs beyond p4src/ on both pipelines: every STF-corpus program the native pipeline runs (with its STF's
entries, clone sessions and multicast groups; frame by frame and in batches) gets the same seeded random frames
and the STF's own packets on the Python and the native pipeline: outputs, drops, run-time faults, counter, direct
counter and register cells must be equal. Fuzzer-generated programs: tests/native/test_fuzz_programs.py."""
from __future__ import annotations

import os
import random
import re
from pathlib import Path

import pytest

from difftest.pipelines import mutate
from p4exec.compiler.program import compile_file
from p4exec.errors import P4Error
from p4exec.harness import Harness
from p4exec.native.build import compiler_available
from p4exec.native.pipeline import NativePipeline
from p4exec.stf import parse as S
from p4exec.stf.parse import parse_stf_file
from p4exec.stf.runner import StfRunner
from p4exec.v1model.loader import load
from tests.support.p4corpus import corpus_programs

CORPUS = Path(__file__).resolve().parents[1] / "p4"
PROGRAMS = corpus_programs(CORPUS)
# programs that loop forever on some inputs (77: `for (bit<8> i = 1; i <= hdr.h.n; ...)` never ends when n is
# 255, in P4 as on both pipelines): only their STF packets are sent
ENDLESS_ON_SOME_INPUTS = {"77_for_loops"}
# random frames per corpus program; P4EXEC_DIFF_FRAMES=10000 for the full differential run (docs/p4exec-native.md)
FRAMES = int(os.environ.get("P4EXEC_DIFF_FRAMES", "300"))
pytestmark = pytest.mark.skipif(compiler_available() is None, reason="no C compiler on this machine")


def frames_for(stf: str, seed: int, n: int) -> list[tuple[int, bytes]]:
    rng = random.Random(seed)
    out = [(int(p), bytes.fromhex(re.sub(r"[^0-9a-fA-F]", "", h)))
           for p, h in re.findall(r"^packet\s+(\d+)\s+([0-9a-fA-F \t]+)$", stf, re.M)]
    base = [d for _, d in out] or [b""]
    for _ in range(n):
        _kind, data = mutate(rng, base)
        out.append((rng.choice([0, 1, 2, 3, 4, 7, 255]), data))
    return out


def state_cells(state) -> dict:
    cells = {f"reg {k}": list(r.values) for k, r in state.registers.items()}
    cells.update({f"cnt {k}": (list(c.packets), list(c.bytes)) for k, c in state.counters.items()})
    cells.update({f"direct {k}": sorted((e._seq, e.packet_count, e.byte_count) for e in t.entries())
                  for k, t in state.tables.items() if t.direct_counter})
    return cells


SETUP = (S.AddEntry, S.SetDefault, S.MirroringAdd, S.MirroringAddMc, S.McMgrpCreate, S.McNodeCreate,
         S.McNodeUpdate, S.McNodeAssociate, S.RegisterWrite, S.CounterWrite, S.MeterSetRates)


def compare(prog, frames: list[tuple[int, bytes]], stf: Path | None = None, batch: bool = False) -> bool:
    """False when the native pipeline declined the program (nothing to compare). With `stf`, its table entries,
    clone sessions, multicast groups and register/counter writes are applied to both first. With `batch`, the
    native side takes the frames through process_batch."""
    py, nat = load(prog, seed=3, pipeline="python"), load(prog, seed=3, pipeline="native")
    if not isinstance(nat.pipeline, NativePipeline):
        return False
    if stf is not None:
        setup = [st for st in parse_stf_file(str(stf)) if isinstance(st, SETUP)]
        for lp in (py, nat):
            StfRunner(Harness(lp), str(stf)).run(setup)
    if batch:
        want = [(i, port, data) for i, (p, d) in enumerate(frames) for port, data in py.run(p, d, i)]
        got = nat.pipeline.process_batch([p for p, _ in frames], [d for _, d in frames], list(range(len(frames))))
        assert want == got
        frames = []
    for i, (port, data) in enumerate(frames):
        a, b = py.run(port, data, i), nat.run(port, data, i)
        assert a == b, f"frame {i} (port {port}, {data.hex()}): python {a} native {b}"
    sa, sb = dict(py.pipeline.stats), dict(nat.pipeline.stats)
    assert {k: v for k, v in sa.items() if v} == {k: v for k, v in sb.items() if v}
    assert state_cells(py.state) == state_cells(nat.state)
    return True


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_corpus_program_random_frames(path: Path) -> None:
    try:
        prog = compile_file(str(path))
    except P4Error:
        pytest.skip("a negative program")
    n = 0 if path.stem in ENDLESS_ON_SOME_INPUTS else FRAMES
    stf = path.with_suffix(".stf")
    frames = frames_for(stf.read_text(), seed=len(path.stem), n=n)
    if compare(prog, frames, stf):
        compare(prog, frames, stf, batch=True)
