"""The STF corpus (tests/p4/NN_*.stf and NNN_*.stf) on the native pipeline: every program it runs passes as on the
Python pipeline (tests/p4exec/test_stf_corpus.py runs them all there); the programs it declines run in Python with the
reason, and how many run natively is pinned so coverage only grows."""
from __future__ import annotations

from pathlib import Path

import pytest

from p4exec.compiler.program import compile_file
from p4exec.native import select
from p4exec.native.build import compiler_available
from p4exec.stf.runner import run_stf
from tests.support.p4corpus import corpus_programs

CORPUS = Path(__file__).resolve().parents[1] / "p4"
PROGRAMS = corpus_programs(CORPUS)
MIN_NATIVE = 108     # corpus programs the native pipeline runs today (see docs/p4exec-native.md)
pytestmark = pytest.mark.skipif(compiler_available() is None, reason="no C compiler on this machine")

_native: list[str] = []


@pytest.fixture(autouse=True)
def _native_default():
    select.set_default("native")
    yield
    select._override.clear()


@pytest.mark.parametrize("prog", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_stf_native(prog: Path) -> None:
    res = run_stf(str(prog), str(prog.with_suffix(".stf")), seed=1)
    assert res.passed, res.report()
    if select.native_reason(compile_file(str(prog))) is None:
        _native.append(prog.stem)


def test_native_coverage() -> None:
    if len(_native) < len(PROGRAMS) // 2:       # run alone (-k): count now
        _native.clear()
        for prog in PROGRAMS:
            run_stf(str(prog), str(prog.with_suffix(".stf")), seed=1)
            if select.native_reason(compile_file(str(prog))) is None:
                _native.append(prog.stem)
    assert len(_native) >= MIN_NATIVE, sorted(_native)
