"""Semantic checks and code generation: P4_16 AST -> checked program -> Python source.

The compiler resolves names and types (as P4_16 defines them: no implicit widening, int literals take the
width of the other operand, `int` is arbitrary-precision and compile-time only) and emits Python source for the
parser, controls, actions and tables. The source is compiled once with compile() and bound to a DeviceState per
instantiation (see p4exec.compiler.program).

It is made of parts, one job per module, that share one typed CompileState (state.py) and call each other
through references set here (`wire`), typed by the Protocols of parts.py, so every call between parts is checked
and no part imports another (this module alone knows the concrete classes):

    decls       core.py         type resolution and checking, top-level/type/enum/const declarations
    pytypes     pytypes.py      Python classes of header/struct/union types (generation; bit layouts in layout.py)
    exprs       expressions.py  operands: literals, coercion, names, members, indexing, initializers
    ops         operators.py    unary/binary operators, shifts, concatenation, casts
    calls       calls.py        calls: arguments and directions, actions, functions, extern functions
    methods     methods.py      method calls: headers, stacks, externs, packet_in/packet_out
    statements  statements.py   statements, locals, loops, switch, function bodies
    tables      tables.py       actions and tables (keys, entries, control-plane names)
    instances   instances.py    extern, parser and control instantiations
    block       blocks.py       controls, parsers, functions, the V1Switch package, module assembly
    checks      checks.py       p4c-bm2-ss back-end rules on the checked program (no code)

This module also keeps the names other modules import from here.
"""
from __future__ import annotations

from p4exec.compiler import controlplane
from p4exec.compiler.blocks import BlockCompiler
from p4exec.compiler.calls import CallCompiler
from p4exec.compiler.checks import BackendRules
from p4exec.compiler.compile_state import CompileState
from p4exec.compiler.core import DeclarationCompiler
from p4exec.compiler.expressions import ExpressionCompiler
from p4exec.compiler.faults import V1_ERRORS  # noqa: F401  (re-exported for p4exec.v1model)
from p4exec.compiler.instances import InstanceCompiler
from p4exec.compiler.methods import MethodCompiler
from p4exec.compiler.operators import OperatorCompiler
from p4exec.compiler.pytypes import DataTypeGenerator
from p4exec.compiler.statements import StatementCompiler
from p4exec.compiler.symbols import (  # noqa: F401  (re-exported: compile.py's names before the split)
    HASH_ALGOS,
    LV,
    Ctx,
    E,
    Sym,
    expr_text,
    fits,
    type_text,
    wrap,
)
from p4exec.compiler.tables import TableCompiler
from p4exec.frontend import ast as A


class Compiler:
    """One compilation: the shared state and the parts, each given the parts it calls."""

    def __init__(self, program: A.Program, filename: str = "<input>") -> None:
        self.st = st = CompileState(program, filename)
        self.pytypes = DataTypeGenerator(st)
        self.decls = DeclarationCompiler(st)
        self.exprs = ExpressionCompiler(st)
        self.ops = OperatorCompiler(st)
        self.calls = CallCompiler(st)
        self.methods = MethodCompiler(st)
        self.statements = StatementCompiler(st)
        self.tables = TableCompiler(st)
        self.instances = InstanceCompiler(st)
        self.block = BlockCompiler(st)
        self.checks = BackendRules(st)
        self.wire()

    def wire(self) -> None:
        d, x, o, c, m, s, t, i, b = (self.decls, self.exprs, self.ops, self.calls, self.methods, self.statements,
                                     self.tables, self.instances, self.block)
        py = self.pytypes          # generation only: needs no other part
        r = self.checks
        r.decls, r.tables = d, t
        d.block, d.checks, d.exprs, d.instances, d.tables = b, r, x, i, t
        x.calls, x.decls, x.ops, x.pytypes = c, d, o, py
        o.decls, o.exprs = d, x
        c.decls, c.exprs, c.methods, c.pytypes, c.statements = d, x, m, py, s
        m.calls, m.decls, m.exprs, m.pytypes = c, d, x, py
        s.calls, s.decls, s.exprs, s.pytypes = c, d, x, py
        t.calls, t.decls, t.exprs, t.instances, t.statements = c, d, x, i, s
        i.block, i.calls, i.decls, i.exprs, i.tables = b, c, d, x, t
        b.calls, b.checks, b.decls, b.exprs, b.instances, b.pytypes, b.statements, b.tables = c, r, d, x, i, py, s, t

    def run(self) -> None:
        self.decls.run()

    def module_source(self) -> str:
        return self.block.module_source()

    @property
    def types_lines(self) -> int:
        """Lines of `module_source()` that define the prelude and the classes (see BlockCompiler)."""
        return self.block.types_lines

    @property
    def info(self) -> controlplane.ProgramInfo:
        return self.st.info

    @property
    def bind(self) -> list[tuple[str, str, str]]:
        return self.st.bind

    @property
    def ctx(self) -> Ctx | None:
        return self.st.ctx
