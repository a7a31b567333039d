"""Values the compiler's parts pass between each other: compiled expressions (E), l-values (LV), symbols (Sym),
block contexts (Ctx), and small pure helpers (width checks, P4 text of expressions and types)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from p4exec.compiler import exprgen, tir
from p4exec.compiler import types as T
from p4exec.errors import SourceLoc
from p4exec.frontend import ast as A

HASH_ALGOS = ["crc32", "crc32_custom", "crc16", "crc16_custom", "random", "identity", "csum16", "xor16"]


class E:
    """A checked expression: its typed IR node (tir.py), compile-time value (or None), l-value and what some uses
    need beyond that; `code`, its Python, comes from the generator (exprgen.py)."""

    __slots__ = ("node", "const", "lv", "loc", "extra", "_code")

    def __init__(self, type_: T.Type, node: tir.Expr | str, const: Any = None, lv: LV | None = None,
                 loc: SourceLoc | None = None, extra: Any = None) -> None:
        # node: the IR of the value, or Python code still produced outside the IR (an Opaque node);
        # const: the compile-time value (int, bool, str, or a tuple/list of values) or None;
        # extra: what some uses need beyond type and code (a 'ref'/'dontcare' tag, list items, the Sym of a
        # method's object, ('stack_next', ...) for extract)
        self.node = tir.retype(node, type_) if isinstance(node, tir.Expr) else tir.Opaque(type_, node)
        self.const = const
        self.lv = lv
        self.loc = loc
        self.extra = extra
        self._code: str | None = None

    @property
    def type(self) -> T.Type:
        return self.node.type

    @property
    def code(self) -> str:
        if self._code is None:
            self._code = exprgen.code(self.node)
        return self._code


class LV:
    """An assignable expression: its IR node (a name, field, stack element or slice of one)."""

    __slots__ = ("node",)

    def __init__(self, node: tir.Expr) -> None:
        self.node = node

    def assign(self, val: str) -> list[str]:
        return exprgen.assign(self.node, val)


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
