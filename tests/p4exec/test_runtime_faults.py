"""Run-time faults in generated code: every class is a counted drop with its reason, never a Python exception.

BMv2 aborts simple_switch on these (docs/p4exec-compiler.md, "Run-time faults"); p4exec drops the one packet
and counts `runtime_fault` plus `runtime_fault:<reason>` in the pipeline's stats.
"""
from __future__ import annotations

import logging
from pathlib import Path

import pytest

from p4exec.compiler import faults
from p4exec.errors import P4Error
from p4exec.harness import Harness

PROG = Path(__file__).parent / "data" / "runtime_faults.p4"
S = bytes([0x11, 0x22])   # the two stack elements


def pkt(kind: int, idx: int = 0, a: int = 0, b: int = 0, body: bytes = S) -> bytes:
    return bytes([kind, idx, a, b]) + body


@pytest.fixture()
def h() -> Harness:
    return Harness.from_file(str(PROG))


# (packet, reason) for each fault class; the same kinds with in-range operands forward normally
FAULTS = [
    (pkt(1, idx=2), faults.STACK_INDEX),           # read of hs[i].f
    (pkt(2, idx=200), faults.STACK_INDEX),         # write of hs[i].f
    (pkt(3, idx=2), faults.STACK_INDEX),           # hs[i] as an inout action argument
    (pkt(7, idx=9), faults.STACK_INDEX),           # hs[i].setInvalid()
    (pkt(8, idx=3), faults.STACK_INDEX),           # hs[i] as an in argument next to an out argument
    (pkt(9, idx=2), faults.STACK_INDEX),           # hs[i].isValid()
    (pkt(10, idx=2, body=b"\x33"), faults.STACK_INDEX),  # extract(hs[i]) in the parser
    (pkt(4, a=7, b=0), faults.DIVISION_BY_ZERO),   # a / 0
    (pkt(5, a=7, b=0), faults.DIVISION_BY_ZERO),   # a % 0
    (pkt(12, a=7, b=0), faults.DIVISION_BY_ZERO),  # in egress
]


@pytest.mark.parametrize(("data", "reason"), FAULTS, ids=[f"{r}-{d[0]}" for d, r in FAULTS])
def test_fault_is_a_counted_drop(h: Harness, data: bytes, reason: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="p4exec.pipeline"):
        assert h.send(0, data) == []
    assert h.stats["runtime_fault"] == 1
    assert h.stats[f"runtime_fault:{reason}"] == 1
    assert h.stats["runtime_error"] == 0, "a Python exception escaped the generated code"
    assert "Traceback" not in caplog.text
    assert reason in caplog.text
    # the switch goes on: the next packet is processed normally
    assert h.send(0, pkt(1, idx=1)) == [(1, pkt(1, idx=1, a=0x22))]


def test_in_range_operands_forward(h: Harness) -> None:
    assert h.send(0, pkt(1, idx=1)) == [(1, pkt(1, idx=1, a=0x22))]
    assert h.send(0, pkt(2, idx=0)) == [(1, pkt(2, idx=0, body=b"\x07\x22"))]
    assert h.send(0, pkt(3, idx=1)) == [(1, pkt(3, idx=1, body=b"\x11\x23"))]
    assert h.send(0, pkt(4, a=7, b=2)) == [(1, pkt(4, a=3, b=2))]
    assert h.send(0, pkt(5, a=7, b=4)) == [(1, pkt(5, a=3, b=4))]
    assert h.send(0, pkt(7, idx=1)) == [(1, pkt(7, idx=1, body=b"\x11"))]
    assert h.send(0, pkt(8, idx=0)) == [(1, pkt(8, idx=0, a=0x11))]
    assert h.send(0, pkt(9, idx=1)) == [(1, pkt(9, idx=1, a=1))]
    assert h.send(0, pkt(10, idx=1, body=b"\x33")) == [(1, pkt(10, idx=1, body=b"\x33"))]
    assert h.send(0, pkt(12, a=9, b=2)) == [(1, pkt(12, a=4, b=2))]
    assert h.stats["runtime_fault"] == 0 and h.stats["runtime_error"] == 0


def test_shifts_never_fault(h: Harness) -> None:
    """A shift by the width or more gives 0 (BMv2 and p4c agree); it is no fault."""
    assert h.send(0, pkt(6, a=1, b=9)) == [(1, pkt(6, a=0, b=9))]
    assert h.send(0, pkt(6, a=3, b=255)) == [(1, pkt(6, a=0, b=255))]
    assert h.send(0, pkt(6, a=3, b=1)) == [(1, pkt(6, a=6, b=1))]
    assert h.stats["runtime_fault"] == 0


def test_every_fault_reason_is_driven() -> None:
    assert {r for _, r in FAULTS} == set(faults.REASONS)


@pytest.mark.parametrize("use", ["hdr.s.next.v = 5;", "hdr.op.a = hdr.s.last.v;",
                                 "hdr.op.a = (bit<8>)hdr.s.lastIndex;"])
def test_stack_next_last_outside_parser_is_a_compile_error(use: str) -> None:
    """p4c: `.next`, `.last` and `.lastIndex` of a stack only in parsers, so no control can run past a stack
    with them (what used to be two fault classes)."""
    text = PROG.read_text().replace("if (hdr.op.kind == 1) {", f"{use}\n        if (hdr.op.kind == 1) {{")
    with pytest.raises(P4Error, match="for stacks can only be used in a parser"):
        Harness.from_source(text, "stack_member.p4")
