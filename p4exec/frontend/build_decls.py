"""Lark tree -> AST, first half: the transformer's base and the declarations.

Names, annotations, types, parameters/arguments, type declarations, externs/functions/packages, constants and
variables.  The parser/control bodies, statements and expressions are built by ``build._Builder``, which
extends this class; the split keeps each module to one part of the grammar.
"""
from __future__ import annotations

from lark import Token, Transformer, v_args

from p4exec.errors import P4Error, SourceLoc
from p4exec.frontend import ast as A
from p4exec.frontend.literals import _parse_annotation, parse_int_literal
from p4exec.frontend.preprocess import Preprocessed


class _Id(str):
    """An identifier that remembers where it was written."""

    loc: SourceLoc | None

    def __new__(cls, text, loc=None):
        obj = super().__new__(cls, str(text))
        obj.loc = loc
        return obj


def name_loc(name, default=None):
    return getattr(name, "loc", None) or default


def _toks(children, *types):
    return [c for c in children if isinstance(c, Token) and (not types or c.type in types)]


def _nodes(children, cls=object):
    return [c for c in children if not isinstance(c, Token) and isinstance(c, cls)]


@v_args(meta=True)
class _DeclBuilder(Transformer):
    def __init__(self, pre: Preprocessed):
        super().__init__()
        self.pre = pre

    def _loc(self, meta):
        if getattr(meta, "empty", True):
            return None
        return self.pre.loc(meta.line, meta.column)

    def _tloc(self, tok):
        return self.pre.loc(tok.line, tok.column)

    def __default__(self, data, children, meta):
        raise P4Error(f"internal: no builder for grammar rule {data}", self._loc(meta))

    # ---- names/annotations
    def start(self, meta, ch):
        return A.Program([c for c in ch if c is not None], loc=self._loc(meta))

    def empty_decl(self, meta, ch):
        return None

    def annotations(self, meta, ch):
        return [_parse_annotation(str(t), self._tloc(t)) for t in ch]

    def opt_annos(self, meta, ch):
        return ch[0] if ch else []

    def name(self, meta, ch):
        return _Id(ch[0], self._tloc(ch[0]))

    nontype_name = name

    # ---- types
    def t_bool(self, meta, ch):
        return A.BoolType(loc=self._loc(meta))

    def t_error(self, meta, ch):
        return A.ErrorTypeRef(loc=self._loc(meta))

    def t_string(self, meta, ch):
        return A.StringTypeRef(loc=self._loc(meta))

    def t_int(self, meta, ch):
        return A.IntInfType(loc=self._loc(meta))

    def t_match_kind(self, meta, ch):
        return A.MatchKindTypeRef(loc=self._loc(meta))

    def t_dontcare(self, meta, ch):
        return A.DontCareType(loc=self._loc(meta))

    def t_bit1(self, meta, ch):
        return A.BitType(A.IntLit(1), False, loc=self._loc(meta))

    def _width(self, ch):
        w = [c for c in ch if not (isinstance(c, Token) and c.type in ("BIT", "INT", "VARBIT"))
             and not isinstance(c, str) or (isinstance(c, Token) and c.type == "INTEGER")]
        w = [c for c in w if c != "r_angle"]
        x = w[0]
        if isinstance(x, Token):
            return parse_int_literal(str(x), self._tloc(x))
        return x

    def t_bit(self, meta, ch):
        return A.BitType(self._width(ch), False, loc=self._loc(meta))

    def t_sint(self, meta, ch):
        return A.BitType(self._width(ch), True, loc=self._loc(meta))

    def t_varbit(self, meta, ch):
        return A.VarbitType(self._width(ch), loc=self._loc(meta))

    def r_angle(self, meta, ch):
        return "r_angle"

    def named_type(self, meta, ch):
        return A.NamedType(str(ch[0]), [], glob=False, loc=self._loc(meta))

    def specialized_type(self, meta, ch):
        base = ch[0]
        return A.NamedType(base.name, ch[1], loc=self._loc(meta))

    def stack_type(self, meta, ch):
        return A.StackType(ch[0], ch[1], loc=self._loc(meta))

    def tuple_type(self, meta, ch):
        return A.TupleType(ch[1], loc=self._loc(meta))

    def type_arg_list(self, meta, ch):
        return list(ch)

    def void_type(self, meta, ch):
        return A.VoidType(loc=self._loc(meta))

    def type_params(self, meta, ch):
        return [c for c in ch if isinstance(c, str) and c != "r_angle"]

    def fn_type_params(self, meta, ch):
        return [c for c in ch if isinstance(c, str) and c != "r_angle" and not isinstance(c, Token)]

    # ---- params/args
    def param_list(self, meta, ch):
        return list(ch)

    def direction(self, meta, ch):
        return str(ch[0])

    def param(self, meta, ch):
        annos = ch[0] or []
        rest = ch[1:]
        direction = ""
        if isinstance(rest[0], str) and rest[0] in ("in", "out", "inout"):
            direction = rest[0]
            rest = rest[1:]
        p = A.Param(rest[1], direction, rest[0], rest[2] if len(rest) > 2 else None, loc=self._loc(meta))
        p.annos = annos
        return p

    def ctor_params(self, meta, ch):
        return ("ctor_params", ch[0])

    def arg_list(self, meta, ch):
        return list(ch)

    def arg(self, meta, ch):
        return A.Arg(ch[0], loc=self._loc(meta))

    def named_arg(self, meta, ch):
        return A.Arg(ch[1], ch[0], loc=self._loc(meta))

    def dontcare_arg(self, meta, ch):
        return A.Arg(None, loc=self._loc(meta))

    # ---- type declarations
    def struct_field(self, meta, ch):
        f = A.Field(ch[2], ch[1], loc=self._loc(meta))
        f.annos = ch[0] or []
        return f

    def _fields_decl(self, cls, meta, ch):
        d = cls(ch[2], _nodes(ch, A.Field), loc=self._loc(meta))
        d.annos = ch[0] or []
        d.type_params = ch[3] or []
        return d

    def header_decl(self, meta, ch):
        return self._fields_decl(A.HeaderDecl, meta, ch)

    def header_union_decl(self, meta, ch):
        return self._fields_decl(A.HeaderUnionDecl, meta, ch)

    def struct_decl(self, meta, ch):
        return self._fields_decl(A.StructDecl, meta, ch)

    def enum_decl(self, meta, ch):
        names = [c for c in ch[2:] if isinstance(c, str) and not isinstance(c, Token)]
        d = A.EnumDecl(ch[2], names[1:], loc=self._loc(meta))
        d.annos = ch[0] or []
        return d

    def ser_member(self, meta, ch):
        return (ch[0], ch[1])

    def ser_enum_decl(self, meta, ch):
        members = [c for c in ch[4:] if isinstance(c, tuple)]
        d = A.EnumDecl(ch[3], [m[0] for m in members], ch[2], [m[1] for m in members], loc=self._loc(meta))
        d.annos = ch[0] or []
        return d

    def typedef_decl(self, meta, ch):
        d = A.TypedefDecl(ch[3], ch[2], False, loc=self._loc(meta))
        d.annos = ch[0] or []
        return d

    def newtype_decl(self, meta, ch):
        d = A.TypedefDecl(ch[3], ch[2], True, loc=self._loc(meta))
        d.annos = ch[0] or []
        return d

    def error_decl(self, meta, ch):
        return A.ErrorDecl("error", [c for c in ch[1:] if not isinstance(c, Token) or c.type != "ERROR"],
                           loc=self._loc(meta))

    def match_kind_decl(self, meta, ch):
        return A.MatchKindDecl("match_kind", [c for c in ch[1:] if not isinstance(c, Token)], loc=self._loc(meta))

    # ---- externs/functions/packages
    def function_proto(self, meta, ch):
        ret, name = ch[0], ch[1]
        tps = ch[2] if len(ch) == 4 else []
        params = ch[-1]
        return A.FunctionProto(name, ret, tps, params, loc=self._loc(meta))

    def method(self, meta, ch):
        p = ch[1]
        p.annos = ch[0] or []
        return p

    def abstract_method(self, meta, ch):
        raise P4Error("unsupported: abstract extern methods", self._loc(meta))

    def ctor(self, meta, ch):
        return ("ctor", str(ch[1]), ch[2], self._loc(meta))

    def extern_obj(self, meta, ch):
        annos = ch[0] or []
        name = ch[2]
        tps = []
        rest = ch[3:]
        if rest and isinstance(rest[0], list):
            tps = rest[0]
            rest = rest[1:]
        methods = [m for m in rest if isinstance(m, A.FunctionProto)]
        ctors = []
        for c in rest:
            if isinstance(c, tuple) and c[0] == "ctor":
                if c[1] != name:
                    raise P4Error(f"constructor name {c[1]} differs from extern name {name}", c[3])
                ctors.append(c[2])
        d = A.ExternDecl(name, tps, methods, ctors, loc=self._loc(meta))
        d.annos = annos
        return d

    def extern_func(self, meta, ch):
        proto = ch[2]
        d = A.ExternFunc(proto.name, proto, loc=self._loc(meta))
        d.annos = ch[0] or []
        return d

    def function_decl(self, meta, ch):
        proto = ch[1]
        d = A.FunctionDecl(proto.name, proto, ch[2], loc=self._loc(meta))
        d.annos = ch[0] or []
        return d

    def package_decl(self, meta, ch):
        tps = ch[3] if len(ch) == 5 else []
        d = A.PackageDecl(ch[2], tps, ch[-1], loc=self._loc(meta))
        d.annos = ch[0] or []
        return d

    def instantiation(self, meta, ch):
        d = A.Instantiation(ch[3], ch[1], ch[2], loc=self._loc(meta))
        d.annos = ch[0] or []
        return d

    # ---- constants/variables
    def const_decl(self, meta, ch):
        d = A.ConstDecl(ch[3], ch[2], ch[4], loc=self._loc(meta))
        d.annos = ch[0] or []
        return d

    def var_decl(self, meta, ch):
        d = A.VarDecl(ch[2], ch[1], ch[3] if len(ch) > 3 else None, loc=self._loc(meta))
        d.annos = ch[0] or []
        return d
