"""Programs from the frontend fuzzer (tests/p4exec/p4fuzz.py's mutated corpus programs, as bench/fuzz_frontend.py
runs them) on both pipelines: every case that compiles gets the table entries, clone sessions and meter rates of
the corpus program it was mutated from (where they still apply; the same on both), the STF's packets and seeded
random frames; outputs, drops, run-time faults, counter, direct counter and register cells must be equal. The
examples are derandomized and bounded (a few dozen cases, ~10 of them compile), so the run is repeatable."""
from __future__ import annotations

import logging
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from p4exec.compiler.program import compile_source
from p4exec.errors import P4Error
from p4exec.native.build import compiler_available
from tests.native.test_fuzz_native import compare, frames_for
from tests.p4exec.p4fuzz import CORPUS, corpus_programs, mutated_programs

CASES = 40
pytestmark = pytest.mark.skipif(compiler_available() is None, reason="no C compiler on this machine")


def base_of(text: str) -> Path:
    """The corpus program `text` was most likely mutated from: the longest common prefix (edits are few)."""
    def common(toks: tuple[str, ...]) -> int:
        src = "".join(toks)
        n = 0
        for a, b in zip(src, text, strict=False):
            if a != b:
                break
            n += 1
        return n
    name = max(corpus_programs(), key=lambda p: common(p[1]))[0]
    return CORPUS / name


def test_fuzzer_programs_same_on_both() -> None:
    seen: Counter = Counter()

    @settings(max_examples=CASES, deadline=None, suppress_health_check=list(HealthCheck), database=None,
              derandomize=True)
    @given(mutated_programs())
    def case(text: str) -> None:
        seen["cases"] += 1
        if "for" in text:           # a mutated loop may never end on some input (test_fuzz_native.py)
            seen["loops"] += 1
            return
        try:
            prog = compile_source(text, "fuzz.p4")
        except P4Error:
            seen["rejected"] += 1
            return
        stf = base_of(text).with_suffix(".stf")
        frames = frames_for(stf.read_text(), seed=len(text), n=150)
        seen["native" if compare(prog, frames, stf) else "declined"] += 1

    logging.getLogger("p4exec.native").setLevel(logging.ERROR)
    case()
    assert seen["cases"] == CASES
    # the derandomized run compiles a fixed set; most of those run natively (the rest fall back with a reason)
    assert seen["native"] >= 5 and seen["native"] >= 2 * seen["declined"], dict(seen)
