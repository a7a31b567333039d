"""The seams between the compiler's parts: one Protocol per part, listing exactly what the other parts call on it.

Each part (core.py, expressions.py, ... blocks.py, checks.py, pytypes.py) holds its references to the others
typed by these Protocols and imports only this module, never another part, so the parts form no import circle;
compile.py alone knows the concrete classes and wires them (mypy checks there that each one fits its Protocol).
A method a part only uses itself stays off its Protocol.
"""
from __future__ import annotations

from typing import Protocol

from p4exec.compiler import controlplane, tir
from p4exec.compiler import types as T
from p4exec.compiler.emit import Emitter
from p4exec.compiler.symbols import E, Sym
from p4exec.frontend import ast as A


class DeclarationPart(Protocol):
    """core.DeclarationCompiler: types and constants."""

    def resolve_type(self, tref) -> T.Type: ...

    def const_int(self, expr, what="value") -> int: ...

    def const_decl(self, d) -> None: ...


class ExpressionPart(Protocol):
    """expressions.ExpressionCompiler: operands and coercion."""

    pinned: dict[int, E]

    def wrapcode(self, code: str, t: T.Bits) -> str: ...

    def lit(self, v, t) -> E: ...

    def coerce(self, e: E, t, node, what="value") -> E: ...

    def objnode(self, e: E) -> tir.Expr: ...

    def objval(self, e: E) -> str: ...

    def expr(self, node, expected=None) -> E: ...


class OperatorPart(Protocol):
    """operators.OperatorCompiler: operators (its x_* handlers are found by name, see ExpressionCompiler)."""

    def unify(self, a: E, b: E, node, op) -> tuple[E, E]: ...


class CallPart(Protocol):
    """calls.CallCompiler: arguments, directions and calls."""

    def bind_args(self, params: list, args: list[A.Arg], node, what: str) -> list: ...

    def call(self, n: A.Call, statement: bool = False) -> E: ...

    def call_with_params(self, n, params, fcode: str, what: str, prefix_args: str = "",
                         ptypes=None, may_exit: bool = False, out_offset: int = 0,
                         copy_objects: bool = False) -> tuple[list[str], str]: ...

    def plan_call(self, n, params, fcode: str, what: str, prefix_args: str = "", ptypes=None,
                  may_exit: bool = False, out_offset: int = 0, copy_objects: bool = False) -> tir.CallPlan: ...

    def enum_member_name(self, e: E, enum_name: str, node) -> str: ...


class MethodPart(Protocol):
    """methods.MethodCompiler: method calls on headers, stacks, externs and packets."""

    def method_call(self, n, base: E, name: str) -> E: ...


class StatementPart(Protocol):
    """statements.StatementCompiler: statements and function bodies."""

    def stmts(self, stmts, em: Emitter) -> None: ...

    def stmt(self, s, em: Emitter) -> None: ...

    def function_body(self, stmts) -> tuple[tir.Stmt, ...]: ...

    def node(self, s) -> tir.Stmt: ...

    def emit_stmt(self, s: tir.Stmt, em: Emitter) -> None: ...

    def assignment(self, lhs: E, rhs: E) -> tir.Stmt: ...

    def action_effect(self, text: str, loc, callee=None) -> None: ...

    def ret_code(self, value: tir.Expr | None) -> str: ...

    def emit_function(self, em: Emitter) -> None: ...


class TablePart(Protocol):
    """tables.TableCompiler: actions, tables and control-plane names."""

    @staticmethod
    def fq(prefix: str, name: str, annos) -> str: ...

    def action_decl(self, d: A.ActionDecl, prefix: str) -> controlplane.ActionInfo: ...

    def table_decl(self, d: A.TableDecl, prefix: str) -> controlplane.TableInfo: ...

    def keyset_items(self, ks, n) -> list: ...


class InstancePart(Protocol):
    """instances.InstanceCompiler: extern, parser and control instantiations."""

    def v1model_version(self) -> int | None: ...

    def instantiation(self, d: A.Instantiation, prefix: str) -> None: ...

    def bound_extern(self, t: T.ExternT, args, fqn: str, node, annos) -> controlplane.ExternInstance: ...

    def ctor_consts(self, decl, args, node) -> list[tuple[str, Sym]]: ...


class BlockPart(Protocol):
    """blocks.BlockCompiler: controls, parsers, functions and the V1Switch package."""

    def compile_control(self, d: A.ControlDecl, prefix: str, roots: dict | None = None,
                        consts: list | None = None) -> str: ...

    def compile_parser(self, d: A.ParserDecl, prefix: str, consts: list | None = None, sub: bool = False) -> str: ...

    def function_decl(self, d: A.FunctionDecl) -> None: ...

    def compile_main(self, main: A.Instantiation) -> None: ...


class RulesPart(Protocol):
    """checks.BackendRules: p4c-bm2-ss back-end rules."""

    def check_pipeline_control_flow(self) -> None: ...

    def check_direct_meter_reads(self) -> None: ...

    def check_parser_terminates(self, d: A.ParserDecl, states: dict[str, int]) -> None: ...

    def check_checksum_control(self, decl: A.ControlDecl, role: str) -> None: ...


class DataTypePart(Protocol):
    """pytypes.DataTypeGenerator: Python classes and default values of P4 data types."""

    def pyclass(self, t) -> str: ...

    def default_value(self, t) -> str: ...
