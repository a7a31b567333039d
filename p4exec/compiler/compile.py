"""Semantic checks and code generation: P4_16 AST -> checked program -> Python source.

One pass over the AST resolves names and types (as P4_16 defines them: no implicit widening, int literals
take the width of the other operand, `int` is arbitrary-precision and compile-time only) and emits Python
source for the parser, controls, actions and tables. The source is compiled once with compile() and bound to a
DeviceState per instantiation (see p4exec.compiler.program).

The compiler is split into mixins, one job per module (core, expressions, operators, calls, methods,
statements, tables, instances, blocks); this module composes them and keeps the names other
modules import from here.
"""
from __future__ import annotations

from p4exec.compiler.blocks import BlockCompiler
from p4exec.compiler.calls import CallCompiler
from p4exec.compiler.core import CompilerCore
from p4exec.compiler.expressions import ExpressionCompiler
from p4exec.compiler.instances import InstanceCompiler
from p4exec.compiler.methods import MethodCompiler
from p4exec.compiler.operators import OperatorCompiler
from p4exec.compiler.statements import StatementCompiler
from p4exec.compiler.symbols import (  # noqa: F401  (re-exported: compile.py's names before the split)
    HASH_ALGOS,
    LV,
    V1_ERRORS,
    Ctx,
    E,
    Sym,
    expr_text,
    fits,
    type_text,
    wrap,
)
from p4exec.compiler.tables import TableCompiler


class Compiler(BlockCompiler, InstanceCompiler, TableCompiler, StatementCompiler, MethodCompiler, CallCompiler,
               OperatorCompiler, ExpressionCompiler, CompilerCore):
    """The whole compiler: one mixin per job (see each module); they call each other through self."""
