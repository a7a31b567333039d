"""Run-time faults of generated code: what BMv2 does not survive, p4exec turns into a counted drop.

BMv2 aborts `simple_switch` on an out-of-range header-stack index (an uncaught `std::out_of_range`,
p4lang/behavioral-model#838, p4lang/p4c#3423) and on a division by zero (boost's `cpp_int` throws). A
switch process that dies is no behaviour an emulator can copy, so generated code raises `P4Fault` with a
reason instead of letting a Python exception (IndexError, ZeroDivisionError) out; the pipeline drops that
one packet and counts `runtime_fault` and `runtime_fault:<reason>` in its stats. docs/p4exec-compiler.md
lists every case.
"""
from __future__ import annotations

from typing import Any, NoReturn

# v1model's parser errors in core.p4's order: their values in generated code (not faults: a parser error is the
# parser's outcome, which the program may read in standard_metadata.parser_error)
V1_ERRORS = ["NoError", "PacketTooShort", "NoMatch", "StackOutOfBounds", "HeaderTooShort", "ParserTimeout",
             "ParserInvalidArgument"]

STACK_INDEX = "header_stack_index"
DIVISION_BY_ZERO = "division_by_zero"
REASONS = (STACK_INDEX, DIVISION_BY_ZERO)


class P4Fault(Exception):
    """A run-time fault of the P4 program; ``reason`` is one of REASONS."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def fault(reason: str) -> NoReturn:
    """Raise a fault from inside an expression (`x if ok else fault(...)`)."""
    raise P4Fault(reason)


def stack_at(stk: Any, i: int) -> Any:
    """Element ``i`` of a header stack; out of range is a fault (BMv2: process abort)."""
    h = stk.h
    if i < len(h):
        return h[i]
    raise P4Fault(STACK_INDEX)


# `.next`/`.last` exist only in parsers (a compile-time rule of p4c), where running past the stack is the
# parser error StackOutOfBounds, not a fault
PRELUDE = "from p4exec.compiler.faults import fault as _fault, stack_at as _stk"
