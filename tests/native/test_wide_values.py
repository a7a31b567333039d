"""Values wider than 64 bits on both pipelines with hypothesis-chosen operands: tests/native/p4/wide_values.p4
computes sums, differences, products, shifts by run-time amounts, slices, concatenation and comparisons of bit<128>
and bit<96> values; a table with a 128-bit ternary key (entries with hypothesis-chosen value and mask) hands back
128- and 96-bit action data. The native pipeline (u128 in C) must send exactly the Python pipeline's bytes."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from p4exec.compiler.program import compile_file
from p4exec.harness import Harness
from p4exec.native.build import compiler_available
from p4exec.native.pipeline import NativePipeline
from p4exec.runtime.match import Exact, Ternary
from p4exec.v1model.loader import load

PROG = Path(__file__).resolve().parent / "p4" / "wide_values.p4"
TAIL = bytes(16 * 6 + 12 * 2 + 8 + 16 * 2 + 12 + 2)
pytestmark = pytest.mark.skipif(compiler_available() is None, reason="no C compiler on this machine")

U128 = st.one_of(st.integers(0, (1 << 128) - 1), st.sampled_from([0, 1, (1 << 64) - 1, 1 << 64, (1 << 128) - 1,
                                                                     1 << 127, (1 << 63), (1 << 65) - 1]))


@pytest.fixture(scope="module")
def prog():
    return compile_file(str(PROG))


@settings(max_examples=150, deadline=None)
@given(a=U128, b=U128, c=st.integers(0, (1 << 96) - 1), sh=st.integers(0, 255),
       key=U128, mask=U128, d=U128, e=st.integers(0, (1 << 96) - 1))
def test_wide_arithmetic_and_wide_table_data_same_on_both(prog, a, b, c, sh, key, mask, d, e) -> None:
    outs = []
    for kind in ("python", "native"):
        h = Harness(load(prog, pipeline=kind))
        if kind == "native":
            assert isinstance(h.pipeline, NativePipeline)
        h.table_add("MyIngress.wt", {"hdr.w.b": Ternary(key & mask, mask), "hdr.w.sh": Exact(sh)}, "set_data",
                    {"d": d, "e": e, "port": 3}, priority=1)
        frame = a.to_bytes(16, "big") + b.to_bytes(16, "big") + c.to_bytes(12, "big") + bytes([sh, 0]) + TAIL
        outs.append(h.send(0, frame))
        frame = a.to_bytes(16, "big") + key.to_bytes(16, "big") + c.to_bytes(12, "big") + bytes([sh, 0]) + TAIL
        outs.append(h.send(0, frame))       # b = the entry's key: a hit
    assert outs[:2] == outs[2:]
    assert outs[1] and outs[1][0][0] == 3
