"""AST of P4_16 programs as p4exec parses them. Every node carries ``loc`` (a SourceLoc)."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from typing import Any

from p4exec.errors import SourceLoc


@dataclass(eq=False)
class Node:
    loc: SourceLoc | None = field(default=None, kw_only=True, repr=False)


@dataclass(eq=False)
class Annotation(Node):
    name: str
    body: str = ""                      # raw text between the parentheses
    args: list[Any] = field(default_factory=list)   # parsed: ints, strings, identifiers (str), kv tuples


def walk(node: object) -> Iterator[Node]:
    """Every node in ``node`` (a node or a list of them), parents before children."""
    if isinstance(node, list):
        for x in node:
            yield from walk(x)
        return
    if not isinstance(node, Node):
        return
    yield node
    for f in fields(node):
        if f.name != "loc":
            yield from walk(getattr(node, f.name))


def anno(annos: list[Annotation] | None, name: str) -> Annotation | None:
    for a in annos or ():
        if a.name == name:
            return a
    return None


# ------------------------------------------------------------------ types as written
@dataclass(eq=False)
class TypeRef(Node):
    pass


@dataclass(eq=False)
class BoolType(TypeRef):
    pass


@dataclass(eq=False)
class ErrorTypeRef(TypeRef):
    pass


@dataclass(eq=False)
class StringTypeRef(TypeRef):
    pass


@dataclass(eq=False)
class MatchKindTypeRef(TypeRef):
    pass


@dataclass(eq=False)
class VoidType(TypeRef):
    pass


@dataclass(eq=False)
class DontCareType(TypeRef):
    pass


@dataclass(eq=False)
class IntInfType(TypeRef):
    pass


@dataclass(eq=False)
class BitType(TypeRef):
    width: Any                # Expr
    signed: bool = False


@dataclass(eq=False)
class VarbitType(TypeRef):
    width: Any


@dataclass(eq=False)
class NamedType(TypeRef):
    name: str
    args: list[TypeRef] = field(default_factory=list)
    glob: bool = False


@dataclass(eq=False)
class StackType(TypeRef):
    elem: TypeRef
    size: Any


@dataclass(eq=False)
class TupleType(TypeRef):
    args: list[TypeRef]


# ------------------------------------------------------------------ expressions
@dataclass(eq=False)
class Expr(Node):
    pass


@dataclass(eq=False)
class IntLit(Expr):
    value: int
    width: int | None = None
    signed: bool = False
    text: str = ""


@dataclass(eq=False)
class BoolLit(Expr):
    value: bool


@dataclass(eq=False)
class StrLit(Expr):
    value: str


@dataclass(eq=False)
class Name(Expr):
    name: str
    glob: bool = False


@dataclass(eq=False)
class Member(Expr):
    expr: Expr
    name: str


@dataclass(eq=False)
class TypeMember(Expr):
    type: TypeRef
    name: str


@dataclass(eq=False)
class ErrorMember(Expr):
    name: str


@dataclass(eq=False)
class Index(Expr):
    expr: Expr
    index: Expr


@dataclass(eq=False)
class Slice(Expr):
    expr: Expr
    hi: Expr
    lo: Expr


@dataclass(eq=False)
class Arg(Node):
    value: Expr | None          # None: don't-care argument `_`
    name: str | None = None


@dataclass(eq=False)
class Call(Expr):
    func: Expr
    args: list[Arg]
    type_args: list[TypeRef] = field(default_factory=list)


@dataclass(eq=False)
class CtorCall(Expr):
    type: TypeRef
    args: list[Arg]


@dataclass(eq=False)
class Unary(Expr):
    op: str
    expr: Expr


@dataclass(eq=False)
class Binary(Expr):
    op: str
    left: Expr
    right: Expr


@dataclass(eq=False)
class Cond(Expr):
    cond: Expr
    then: Expr
    other: Expr


@dataclass(eq=False)
class Cast(Expr):
    type: TypeRef
    expr: Expr


@dataclass(eq=False)
class ListExpr(Expr):
    items: list[Expr]


@dataclass(eq=False)
class StructInit(Expr):
    fields: list[tuple[str, Expr]]


@dataclass(eq=False)
class ThisExpr(Expr):
    pass


# keyset expressions (select cases and table entries)
@dataclass(eq=False)
class KsDefault(Expr):
    pass


@dataclass(eq=False)
class KsDontCare(Expr):
    pass


@dataclass(eq=False)
class KsMask(Expr):
    value: Expr
    mask: Expr


@dataclass(eq=False)
class KsRange(Expr):
    lo: Expr
    hi: Expr


@dataclass(eq=False)
class KsTuple(Expr):
    items: list[Expr]


# ------------------------------------------------------------------ statements
@dataclass(eq=False)
class Stmt(Node):
    pass


@dataclass(eq=False)
class Assign(Stmt):
    lhs: Expr
    rhs: Expr


@dataclass(eq=False)
class CallStmt(Stmt):
    call: Call


@dataclass(eq=False)
class If(Stmt):
    cond: Expr
    then: Stmt
    other: Stmt | None = None


@dataclass(eq=False)
class SwitchCase(Node):
    label: Expr | None          # None: default
    body: Block | None          # None: fall through to the next case


@dataclass(eq=False)
class Switch(Stmt):
    expr: Expr
    cases: list[SwitchCase]


@dataclass(eq=False)
class Block(Stmt):
    stmts: list[Node]


@dataclass(eq=False)
class Exit(Stmt):
    pass


@dataclass(eq=False)
class Return(Stmt):
    value: Expr | None = None


@dataclass(eq=False)
class Empty(Stmt):
    pass


@dataclass(eq=False)
class For(Stmt):
    """`for (init; cond; updates) body`; `init` holds VarDecl/Assign/CallStmt, `updates` Assign/CallStmt."""
    init: list[Stmt]
    cond: Expr | None
    updates: list[Stmt]
    body: Stmt


@dataclass(eq=False)
class ForIn(Stmt):
    """`for (T name in lo .. hi) body` (hi set) or `for (T name in collection) body` (hi None)."""
    type: TypeRef
    name: str
    coll: Expr
    hi: Expr | None
    body: Stmt


@dataclass(eq=False)
class Break(Stmt):
    pass


@dataclass(eq=False)
class Continue(Stmt):
    pass


# ------------------------------------------------------------------ declarations
@dataclass(eq=False)
class Decl(Node):
    name: str
    annos: list[Annotation] = field(default_factory=list, kw_only=True)


@dataclass(eq=False)
class VarDecl(Decl):
    type: TypeRef
    init: Expr | None = None


@dataclass(eq=False)
class ConstDecl(Decl):
    type: TypeRef
    value: Expr


@dataclass(eq=False)
class Field(Decl):
    type: TypeRef


@dataclass(eq=False)
class HeaderDecl(Decl):
    fields: list[Field]
    type_params: list[str] = field(default_factory=list)    # generic struct/header (P4_16 1.2.2)


@dataclass(eq=False)
class HeaderUnionDecl(Decl):
    fields: list[Field]
    type_params: list[str] = field(default_factory=list)    # generic struct/header (P4_16 1.2.2)


@dataclass(eq=False)
class StructDecl(Decl):
    fields: list[Field]
    type_params: list[str] = field(default_factory=list)    # generic struct/header (P4_16 1.2.2)


@dataclass(eq=False)
class EnumDecl(Decl):
    members: list[str]
    base: TypeRef | None = None
    values: list[Expr] | None = None


@dataclass(eq=False)
class TypedefDecl(Decl):
    type: TypeRef
    newtype: bool = False


@dataclass(eq=False)
class ErrorDecl(Decl):
    members: list[str]


@dataclass(eq=False)
class MatchKindDecl(Decl):
    members: list[str]


@dataclass(eq=False)
class Param(Decl):
    direction: str          # "", "in", "out", "inout"
    type: TypeRef
    default: Expr | None = None


@dataclass(eq=False)
class FunctionProto(Decl):
    ret: TypeRef
    type_params: list[str]
    params: list[Param]


@dataclass(eq=False)
class ExternDecl(Decl):
    type_params: list[str]
    methods: list[FunctionProto]
    ctors: list[list[Param]]


@dataclass(eq=False)
class ExternFunc(Decl):
    proto: FunctionProto


@dataclass(eq=False)
class FunctionDecl(Decl):
    proto: FunctionProto
    body: Block


@dataclass(eq=False)
class PackageDecl(Decl):
    type_params: list[str]
    params: list[Param]


@dataclass(eq=False)
class Instantiation(Decl):
    type: TypeRef
    args: list[Arg]


@dataclass(eq=False)
class ValueSetDecl(Decl):
    type: TypeRef
    size: Expr


@dataclass(eq=False)
class SelectCase(Node):
    keyset: Expr
    state: str


@dataclass(eq=False)
class Select(Node):
    exprs: list[Expr]
    cases: list[SelectCase]


@dataclass(eq=False)
class ParserState(Decl):
    stmts: list[Node]
    transition: str | Select | None       # state name, Select, or None (implicit reject)


@dataclass(eq=False)
class ParserDecl(Decl):
    type_params: list[str]
    params: list[Param]
    ctor_params: list[Param]
    locals: list[Decl]
    states: list[ParserState]


@dataclass(eq=False)
class ParserTypeDecl(Decl):
    type_params: list[str]
    params: list[Param]


@dataclass(eq=False)
class ActionDecl(Decl):
    params: list[Param]
    body: Block


@dataclass(eq=False)
class KeyElem(Node):
    expr: Expr
    match_kind: str
    annos: list[Annotation] = field(default_factory=list)


@dataclass(eq=False)
class ActionRef(Node):
    name: str
    args: list[Arg] | None = None
    annos: list[Annotation] = field(default_factory=list)


@dataclass(eq=False)
class TableEntryDecl(Node):
    keyset: Expr
    action: ActionRef
    priority: Expr | None = None
    annos: list[Annotation] = field(default_factory=list)


@dataclass(eq=False)
class TableProp(Node):
    name: str
    value: Any        # list[KeyElem] | list[ActionRef] | list[TableEntryDecl] | Expr
    const: bool = False
    annos: list[Annotation] = field(default_factory=list)


@dataclass(eq=False)
class TableDecl(Decl):
    props: list[TableProp]


@dataclass(eq=False)
class ControlDecl(Decl):
    type_params: list[str]
    params: list[Param]
    ctor_params: list[Param]
    locals: list[Decl]
    body: Block


@dataclass(eq=False)
class ControlTypeDecl(Decl):
    type_params: list[str]
    params: list[Param]


@dataclass(eq=False)
class Program(Node):
    decls: list[Decl]
