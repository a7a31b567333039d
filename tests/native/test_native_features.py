"""Feature programs of the C generator (tests/native/p4/*.p4, each with its STF): the STF passes on both pipelines,
the native pipeline really runs the program (no fallback), and seeded random frames plus the STF's packets give
the same outputs, drops, faults, counter and register cells on both, frame by frame and in batches."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from p4exec.compiler.program import compile_file
from p4exec.native import select
from p4exec.native.build import compiler_available
from p4exec.stf.runner import run_stf
from tests.native.test_fuzz_native import compare, frames_for

PROGRAMS = sorted((Path(__file__).resolve().parent / "p4").glob("*.p4"))
FRAMES = int(os.environ.get("P4EXEC_DIFF_FRAMES", "1000"))
pytestmark = pytest.mark.skipif(compiler_available() is None, reason="no C compiler on this machine")


@pytest.fixture(autouse=True)
def _restore_default():
    yield
    select._override.clear()


@pytest.mark.parametrize("kind", select.CHOICES)
@pytest.mark.parametrize("prog", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_stf_on_both(prog: Path, kind: str) -> None:
    select.set_default(kind)
    res = run_stf(str(prog), str(prog.with_suffix(".stf")), seed=1)
    assert res.passed, res.report()
    if kind == "native":
        assert select.native_reason(compile_file(str(prog))) is None


@pytest.mark.parametrize("prog", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_random_frames_same_on_both(prog: Path) -> None:
    stf = prog.with_suffix(".stf")
    frames = frames_for(stf.read_text(), seed=len(prog.stem), n=FRAMES)
    compiled = compile_file(str(prog))
    assert compare(compiled, frames, stf), select.native_reason(compiled)
    assert compare(compiled, frames, stf, batch=True)


def test_value_set_members_written_at_run_time() -> None:
    """The members stay in the runtime's ValueSet (P4Runtime's store): C asks it, so a MODIFY is seen at once."""
    from p4exec.runtime import Exact, Ternary
    from p4exec.v1model.loader import load

    prog = compile_file(str(PROGRAMS[0].parent / "value_set_members.p4"))
    py, nat = load(prog, seed=3, pipeline="python"), load(prog, seed=3, pipeline="native")
    assert select.native_reason(prog) is None
    frames = [(0, bytes([t >> 8, t & 255, v, 0x10])) for t in (0x0800, 0x8100, 0x88A8, 0x1234) for v in range(0, 256, 7)] + [(0, b"\x81\x00")]
    sent = []
    for members in ([(Exact(0x8100), Ternary(0x00, 0xF0))], [],
                    [(Exact(0x88A8), Ternary(0x01, 0x01)), (Exact(0x1234), None)]):
        for lp in (py, nat):
            name = next(iter(lp.state.value_sets))
            lp.state.value_sets[name].set_members(members)
        for port, data in frames:
            a, b = py.run(port, data), nat.run(port, data)
            assert a == b, (members, data.hex(), a, b)
            sent.append(a[0][0] if a else None)
    assert {1, 2, 3} <= set(sent)       # accepted, tagged through the set, rejected


def test_direct_counter_cells_are_the_runtime_entries() -> None:
    """Direct counter hits in C count on the runtime entry, so a P4Runtime write of the counter data (in place on
    the entry) and later hits add up the same on both pipelines."""
    from p4exec.harness import Harness
    from p4exec.stf.parse import parse_stf_file
    from p4exec.stf.runner import StfRunner
    from p4exec.v1model.loader import load
    from tests.native.test_fuzz_native import SETUP

    corpus = Path(__file__).resolve().parents[1] / "p4"
    prog = compile_file(str(corpus / "36_direct_counter.p4"))
    setup = [s for s in parse_stf_file(str(corpus / "36_direct_counter.stf")) if isinstance(s, SETUP)]
    seen = []
    for kind in select.CHOICES:
        lp = load(prog, seed=1, pipeline=kind)
        StfRunner(Harness(lp), "36_direct_counter.stf").run(setup)
        for i in range(5):
            lp.run(0, bytes([1 + i % 3, 0, 0, 0, i]), i)
        table = next(t for t in lp.state.tables.values() if t.direct_counter)
        table.entries()[0].packet_count = 100
        for i in range(4):
            lp.run(0, bytes([1 + i % 2, 0, 0, 0]), 10 + i)
        seen.append(sorted((e._seq, e.packet_count, e.byte_count) for e in table.entries()))
    assert select.native_reason(prog) is None
    assert seen[0] == seen[1] and seen[0][0][1] > 100
