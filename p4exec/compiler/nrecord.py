"""What the C generator needs of a program beyond the statement IR: the frames the Python generator writes as
text (controls, actions, tables, parser states and their select transitions), recorded as the compiler checks
them. The compiler fills one `NativeRecord` per compilation (CompileState.native); nothing in it is Python code
except the Python names the IR already uses, which the C generator maps to C names.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from p4exec.compiler import tir
from p4exec.compiler import types as T


@dataclass
class ControlRec:
    func: str                                   # generated function name (C_...)
    params: list[tuple[str, T.Type, str]]       # (Python name, type, direction)
    frame: list[tuple[str, T.Type, tir.Expr | None]]  # frame slots (L.<py>) with initial value, None: default
    body: tuple[tir.Stmt, ...]


@dataclass
class ActionRec:
    func: str
    name: str                                   # control-plane name
    ctx_args: list[str]                         # the control's context names passed first (objects, "L")
    params: list[tuple[str, T.Type, str]]       # (Python name, type, direction) of every parameter
    body: tuple[tir.Stmt, ...]


@dataclass
class KeyRec:
    node: tir.Expr
    kind: str
    width: int


@dataclass
class TableRec:
    func: str
    name: str                                   # control-plane name
    ctx_args: list[str]
    keys: list[KeyRec]
    # action name -> (action function or "" for a no-op, whether it takes the context args)
    dispatch: dict[str, tuple[str, bool]]
    bound: bool = False                         # an action with directional args bound in the list
    # action name -> (the call its dispatcher makes with the bound arguments, the Python names of the
    # control-plane arguments that call reads) for each action of the list with bound directional arguments
    bound_calls: dict[str, tuple[tir.CallPlan, list[str]]] = field(default_factory=dict)
    direct_meter: bool = False


@dataclass
class SelectCase:
    items: list[tuple[str, Any]]                # ("default",) / ("value", node) / ("mask", v, m) / ("range", lo, hi)
    target: str                                 # state name or accept/reject
    value_set: str = ""


@dataclass
class StateRec:
    name: str
    index: int
    body: list[tir.Stmt]
    keys: list[tir.Expr] | None = None          # None: a plain transition to `target`
    target: str = "reject"
    cases: list[SelectCase] = field(default_factory=list)


@dataclass
class ParserRec:
    func: str
    params: list[tuple[str, T.Type, str]]
    locals: list[tir.Stmt] = field(default_factory=list)
    states: list[StateRec] = field(default_factory=list)
    sub: bool = False


@dataclass
class FunctionRec:
    func: str
    params: list[tuple[str, T.Type, str]]       # (Python name, type, direction)
    ret: T.Type                                 # VoidT for a function without a value
    body: tuple[tir.Stmt, ...]


@dataclass
class NativeRecord:
    controls: dict[str, ControlRec] = field(default_factory=dict)
    actions: dict[str, ActionRec] = field(default_factory=dict)
    tables: dict[str, TableRec] = field(default_factory=dict)
    parsers: dict[str, ParserRec] = field(default_factory=dict)
    functions: dict[str, FunctionRec] = field(default_factory=dict)   # plain P4 functions
    # direct_meter name -> the l-value its read() writes (BMv2 writes it when the meter's table hits an entry)
    meter_targets: dict[str, tir.Expr] = field(default_factory=dict)
    unsupported: list[str] = field(default_factory=list)  # reasons found while compiling
