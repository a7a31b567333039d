"""Values the compiler's parts pass between each other: compiled expressions (E), l-values (LV), symbols (Sym),
block contexts (Ctx), and small pure helpers (width checks, P4 text of expressions and types)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

from p4exec.compiler import types as T
from p4exec.errors import SourceLoc
from p4exec.frontend import ast as A

V1_ERRORS = ["NoError", "PacketTooShort", "NoMatch", "StackOutOfBounds", "HeaderTooShort", "ParserTimeout",
             "ParserInvalidArgument"]
HASH_ALGOS = ["crc32", "crc32_custom", "crc16", "crc16_custom", "random", "identity", "csum16", "xor16"]


class E:
    """A compiled expression: its P4 type, Python code, compile-time value (or None) and l-value info."""

    __slots__ = ("type", "code", "const", "lv", "loc", "extra")

    def __init__(self, type_: T.Type, code: str, const: Any = None, lv: LV | None = None,
                 loc: SourceLoc | None = None, extra: Any = None) -> None:
        # const: the compile-time value (int, bool, str, or a tuple/list of values) or None;
        # extra: what some uses need beyond type and code (a 'ref'/'dontcare' tag, list items, the Sym of a
        # method's object, ('stack_next', ...) for extract)
        self.type = type_
        self.code = code
        self.const = const
        self.lv = lv
        self.loc = loc
        self.extra = extra


class LV:
    """How to assign to an l-value."""

    __slots__ = ("target", "base", "hi", "lo", "type")

    def __init__(self, target: str | None = None, base: E | None = None, hi: int = 0, lo: int = 0,
                 type_: T.Type | None = None) -> None:
        self.target = target      # python assignable expression
        self.base = base          # for slices: the E of the sliced l-value
        self.hi = hi
        self.lo = lo
        self.type = type_

    def assign(self, val: str) -> list[str]:
        if self.base is None:
            return [f"{self.target} = {val}"]
        w = self.hi - self.lo + 1
        m = (1 << w) - 1
        bt = cast(T.Bits, T.strip_new(self.base.type))   # slices are of bit<W>/int<W> values only
        clear = bt.mask ^ (m << self.lo)
        newval = f"(({self.base.code} & {clear:#x}) | (({val}) << {self.lo}))"
        if bt.signed:
            half = 1 << (bt.width - 1)
            newval = f"((({newval} & {bt.mask:#x}) ^ {half:#x}) - {half:#x})"
        assert self.base.lv is not None      # only l-values are sliced for assignment
        return self.base.lv.assign(newval)


@dataclass
class Sym:
    kind: str                 # const var param action table instance extern_func function type state block
    type: Any = None
    py: str = ""
    const: Any = None
    decl: Any = None
    direction: str = ""
    info: Any = None
    loc: SourceLoc | None = None


@dataclass
class Ctx:
    kind: str                          # parser / control / action / function
    prefix: str = ""                   # fully-qualified name prefix ("MyIngress")
    ctx_args: str = ""                 # python args forwarded to actions/tables in this control
    frame: bool = False
    ret_type: Any = None
    out_params: list = field(default_factory=list)   # python names of out/inout scalar params to return
    control: Any = None
    in_parser_state: bool = False
    pyused: set = field(default_factory=set)
    roots: dict = field(default_factory=dict)
    sub_parser: bool = False
    loop_depth: int = 0                # enclosing for loops (break/continue are legal inside one)
    # in an action: the statement runs only on some paths (inside a non-constant `if`, or after one that may
    # `return`); p4c-bm2-ss cannot run calls or `exit` there (see StatementCompiler.action_effect)
    conditional: bool = False
    action: Any = None                 # in an action: its ir.ActionInfo


def _loc(node):
    return getattr(node, "loc", None)


def _anno_arg(annos, name):
    a = A.anno(annos, name)
    if a is None:
        return None
    return a.args[0] if a.args else ""


def fits(v: int, t: T.Bits) -> bool:
    if t.signed:
        return -(1 << (t.width - 1)) <= v < (1 << (t.width - 1))
    return 0 <= v <= t.mask


def wrap(v: int, t: T.Bits) -> int:
    v &= t.mask
    if t.signed and v >= 1 << (t.width - 1):
        v -= 1 << t.width
    return v


def expr_text(e) -> str:
    """The expression as p4c prints it in P4Info match-field names."""
    if isinstance(e, A.Name):
        return ("." if e.glob else "") + e.name
    if isinstance(e, A.Member):
        return f"{expr_text(e.expr)}.{e.name}"
    if isinstance(e, A.Index):
        return f"{expr_text(e.expr)}[{expr_text(e.index)}]"
    if isinstance(e, A.Slice):
        return f"{expr_text(e.expr)}[{expr_text(e.hi)}:{expr_text(e.lo)}]"
    if isinstance(e, A.Call):
        return f"{expr_text(e.func)}({', '.join(expr_text(a.value) for a in e.args if a.value is not None)})"
    if isinstance(e, A.IntLit):
        return e.text or str(e.value)
    if isinstance(e, A.Binary):
        return f"{expr_text(e.left)} {e.op} {expr_text(e.right)}"
    if isinstance(e, A.Cast):
        return f"({type_text(e.type)}){expr_text(e.expr)}"
    if isinstance(e, A.TypeMember):
        return f"{type_text(e.type)}.{e.name}"
    if isinstance(e, A.BoolLit):
        return "true" if e.value else "false"
    return "?"


def type_text(t) -> str:
    if isinstance(t, A.BitType):
        w = t.width.value if isinstance(t.width, A.IntLit) else "?"
        return f"{'int' if t.signed else 'bit'}<{w}>"
    if isinstance(t, A.NamedType):
        return t.name
    if isinstance(t, A.BoolType):
        return "bool"
    return "?"
