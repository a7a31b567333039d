"""Parse preprocessed P4_16 text into the AST (p4sim.frontend.ast).

Lark LALR with a basic lexer. P4's grammar needs to know which identifiers name types (``(T)x`` is a cast,
``T<...>`` a specialisation, ``x < y`` a comparison); like p4c's lexer, a post-lexer pass classifies them:
it scans the token stream once for type declarations (header/struct/enum/typedef/extern/parser/control/package
names, and type parameters within their declaration) and retypes those identifiers as TYPE_IDENTIFIER. A ``<``
directly after the name of a generic function/method (``lookahead<bit<8>>()``) becomes L_ANGLE_ARGS.
"""
from __future__ import annotations

import functools
import re
from pathlib import Path

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError

from p4sim.errors import P4Error, P4SyntaxError, SourceLoc
from p4sim.frontend import ast as A
from p4sim.frontend.preprocess import Preprocessed, preprocess, preprocess_file

_TYPE_START = {"BIT", "INT", "VARBIT", "BOOL", "TUPLE", "ERROR", "STRING", "TYPE_IDENTIFIER", "DONTCARE", "VOID",
               "LIST", "MATCH_KIND"}
_CLOSE = {"GT", "R_ANGLE_SHIFT"}


class _TypeNamePostLex:
    always_accept = ("IDENTIFIER",)

    def process(self, stream):
        toks = list(stream)
        _classify(toks)
        return iter(toks)


def _find_matching_angle(toks, i):
    """toks[i] is '<'; return the index of the matching closing angle (or -1)."""
    depth = 0
    for j in range(i, len(toks)):
        t = toks[j].type
        if t in ("LT", "L_ANGLE_ARGS"):
            depth += 1
        elif t in _CLOSE:
            depth -= 1
            if depth == 0:
                return j
        elif t in ("SEMICOLON", "LBRACE", "RBRACE") or toks[j] in (";", "{", "}"):
            return -1
    return -1


def _decl_end(toks, i):
    """End index of the declaration containing index i: the ';' at depth 0 or the '}' closing its body."""
    depth = 0
    opened = False
    for j in range(i, len(toks)):
        v = toks[j]
        if v in ("{", "("):
            depth += 1
            opened = opened or v == "{"
        elif v in ("}", ")"):
            depth -= 1
            if depth <= 0 and v == "}" and opened:
                return j
        elif v == ";" and depth == 0:
            return j
    return len(toks) - 1


def _classify(toks):
    n = len(toks)
    types: set[str] = set()
    generic_fns: set[str] = set()
    scopes: list[tuple[int, int, set[str]]] = []

    def ident(k):
        return k < n and toks[k].type == "IDENTIFIER"

    def params_at(k):  # toks[k] == '<' of a type parameter list; returns (names, close index)
        close = _find_matching_angle(toks, k)
        if close < 0:
            return set(), k
        return {t.value for t in toks[k + 1:close] if t.type == "IDENTIFIER"}, close

    def function_proto(start, end, scope_end=None):
        """Find the function name in toks[start:end] (before the first '(' at depth 0); mark generics."""
        depth = 0
        for j in range(start, end):
            v = toks[j]
            if v == "<" or toks[j].type in ("LT",):
                depth += 1
            elif toks[j].type in _CLOSE:
                depth -= 1
            elif v == "(" and depth == 0:
                prev = j - 1
                if prev >= start and toks[prev].type in _CLOSE:
                    # walk back to the matching '<'
                    d = 0
                    k = prev
                    while k >= start:
                        if toks[k].type in _CLOSE:
                            d += 1
                        elif toks[k].type == "LT":
                            d -= 1
                            if d == 0:
                                break
                        k -= 1
                    if k > start and ident(k - 1):
                        generic_fns.add(toks[k - 1].value)
                        names = {t.value for t in toks[k + 1:prev] if t.type == "IDENTIFIER"}
                        scopes.append((start, scope_end if scope_end is not None else end, names))
                return

    i = 0
    while i < n:
        t = toks[i]
        ty = t.type
        if ty in ("HEADER", "HEADER_UNION", "STRUCT", "PARSER", "CONTROL", "PACKAGE") and ident(i + 1):
            types.add(toks[i + 1].value)
            if i + 2 < n and toks[i + 2].type == "LT":
                names, _close = params_at(i + 2)
                scopes.append((i + 2, _decl_end(toks, i + 2), names))
        elif ty == "ENUM":
            j = i + 1
            while j < n and toks[j] != "{":
                j += 1
            if j - 1 > i and ident(j - 1):
                types.add(toks[j - 1].value)
        elif ty in ("TYPEDEF", "TYPE") and (i == 0 or toks[i - 1] != "."):
            j = i + 1
            depth = 0
            while j < n and not (toks[j] == ";" and depth == 0):
                if toks[j] in ("{",):
                    depth += 1
                elif toks[j] == "}":
                    depth -= 1
                j += 1
            if ident(j - 1):
                types.add(toks[j - 1].value)
        elif ty == "EXTERN":
            if ident(i + 1) and i + 2 < n and (toks[i + 2] == "{" or toks[i + 2].type == "LT"):
                name = toks[i + 1].value
                types.add(name)
                end = _decl_end(toks, i)
                k = i + 2
                if toks[k].type == "LT":
                    toks[k].type = "L_ANGLE_ARGS"
                    names, close = params_at(k)
                    scopes.append((k, end, names))
                    k = close + 1
                # method prototypes inside the body
                k += 1
                while k < end:
                    m = k
                    while m < end and toks[m] != ";":
                        m += 1
                    function_proto(k, m)
                    k = m + 1
                i = end
            else:
                end = _decl_end(toks, i)
                function_proto(i + 1, end)
                i = end
        i += 1

    # retype
    for i, t in enumerate(toks):
        if t.type == "IDENTIFIER":
            v = t.value
            if v in types or any(a <= i <= b and v in s for a, b, s in scopes):
                t.type = "TYPE_IDENTIFIER"
    for i, t in enumerate(toks):
        if t.type == "LT" and i > 0 and toks[i - 1].type == "IDENTIFIER" and toks[i - 1].value in generic_fns \
                and i + 1 < n and toks[i + 1].type in _TYPE_START:
            t.type = "L_ANGLE_ARGS"


@functools.lru_cache(maxsize=1)
def _lark() -> Lark:
    grammar = (Path(__file__).resolve().parent / "p4.lark").read_text()
    return Lark(grammar, parser="lalr", lexer="basic", postlex=_TypeNamePostLex(), propagate_positions=True,
                maybe_placeholders=True, cache=True)


# ------------------------------------------------------------------ annotation bodies
_ANNO_TOKEN = re.compile(r'\s*(?:"((?:\\.|[^"\\])*)"|([A-Za-z_][A-Za-z0-9_.]*)|(0[xX][0-9a-fA-F_]+|[0-9][0-9_]*)|(.))')


def _parse_annotation(text: str, loc) -> A.Annotation:
    if text.startswith("@pragma"):
        rest = text[len("@pragma"):].strip()
        parts = rest.split(None, 1)
        return A.Annotation(parts[0] if parts else "pragma", parts[1] if len(parts) > 1 else "", [], loc=loc)
    m = re.match(r"@([A-Za-z_][A-Za-z0-9_]*)\s*", text)
    name = m.group(1)
    rest = text[m.end():]
    body = ""
    args: list = []
    if rest.startswith("(") or rest.startswith("["):
        body = rest[1:-1]
        pos = 0
        cur: list = []
        while pos < len(body):
            mm = _ANNO_TOKEN.match(body, pos)
            if not mm:
                break
            pos = mm.end()
            if mm.group(1) is not None:
                cur.append(bytes(mm.group(1), "utf-8").decode("unicode_escape"))
            elif mm.group(2) is not None:
                cur.append(mm.group(2))
            elif mm.group(3) is not None:
                cur.append(int(mm.group(3).replace("_", ""), 0))
            elif mm.group(4) == ",":
                args.append(cur[0] if len(cur) == 1 else tuple(cur))
                cur = []
            elif mm.group(4) and mm.group(4).strip():
                if mm.group(4) == "-" and pos < len(body):
                    cur.append("-")
                else:
                    cur.append(mm.group(4))
        if cur:
            args.append(cur[0] if len(cur) == 1 else tuple(cur))
        # fold "-", int into a negative int
        args = [(-a[1]) if isinstance(a, tuple) and len(a) == 2 and a[0] == "-" and isinstance(a[1], int) else a
                for a in args]
    return A.Annotation(name, body, args, loc=loc)


# ------------------------------------------------------------------ integer literals
_INT_RE = re.compile(r"(?:([0-9]+)([ws]))?(.*)", re.S)


def parse_int_literal(text: str, loc) -> A.IntLit:
    m = _INT_RE.fullmatch(text)
    width = int(m.group(1)) if m.group(1) else None
    signed = m.group(2) == "s"
    body = m.group(3).replace("_", "")
    low = body.lower()
    if low.startswith("0x"):
        value = int(body[2:], 16)
    elif low.startswith("0b"):
        value = int(body[2:], 2)
    elif low.startswith("0o"):
        value = int(body[2:], 8)
    elif low.startswith("0d"):
        value = int(body[2:], 10)
    else:
        value = int(body, 10)
    if width is not None and width == 0 and not signed:
        raise P4Error("bit width of an integer literal must be positive", loc)
    return A.IntLit(value, width, signed, text, loc=loc)


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
class _Builder(Transformer):
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

    # ---- parsers
    def _block_header(self, ch):
        annos = ch[0] or []
        name = ch[2]
        rest = list(ch[3:])
        tps = []
        if rest and isinstance(rest[0], list) and (not rest[0] or isinstance(rest[0][0], str)) \
                and not (rest[0] and isinstance(rest[0][0], A.Param)):
            if rest[0] and all(isinstance(x, str) for x in rest[0]):
                tps = rest.pop(0)
            elif not rest[0] and len(rest) > 1 and isinstance(rest[1], list):
                rest.pop(0)
        params = rest.pop(0)
        ctor = []
        if rest and isinstance(rest[0], tuple) and rest[0][0] == "ctor_params":
            ctor = rest.pop(0)[1]
        return annos, name, tps, params, ctor, rest

    def parser_type_decl(self, meta, ch):
        annos, name, tps, params, _c, _r = self._block_header(ch)
        d = A.ParserTypeDecl(name, tps, params, loc=self._loc(meta))
        d.annos = annos
        return d

    def parser_decl(self, meta, ch):
        annos, name, tps, params, ctor, rest = self._block_header(ch)
        states = [r for r in rest if isinstance(r, A.ParserState)]
        local = [r for r in rest if not isinstance(r, A.ParserState)]
        d = A.ParserDecl(name, tps, params, ctor, local, states, loc=self._loc(meta))
        d.annos = annos
        return d

    def value_set_decl(self, meta, ch):
        d = A.ValueSetDecl(ch[-1], ch[2], ch[-2], loc=self._loc(meta))
        d.annos = ch[0] or []
        return d

    def parser_state(self, meta, ch):
        annos, name = ch[0] or [], ch[2]
        rest = ch[3:]
        trans = None
        if rest and isinstance(rest[-1], tuple) and rest[-1][0] == "transition":
            trans = rest[-1][1]
            rest = rest[:-1]
        d = A.ParserState(name, [r for r in rest if r is not None], trans, loc=self._loc(meta))
        d.annos = annos
        return d

    def parser_block(self, meta, ch):
        return A.Block(list(ch), loc=self._loc(meta))

    def transition_direct(self, meta, ch):
        return ("transition", ch[1])

    def transition_select(self, meta, ch):
        return ("transition", ch[1])

    def select_expr(self, meta, ch):
        return A.Select(ch[1], list(ch[2:]), loc=self._loc(meta))

    def select_case(self, meta, ch):
        return A.SelectCase(ch[0], ch[1], loc=self._loc(meta))

    def keyset(self, meta, ch):
        return ch[0]

    def tuple_keyset(self, meta, ch):
        return A.KsTuple(list(ch), loc=self._loc(meta))

    def default_keyset(self, meta, ch):
        return A.KsDefault(loc=self._loc(meta))

    def dontcare_keyset(self, meta, ch):
        return A.KsDontCare(loc=self._loc(meta))

    def ks_default(self, meta, ch):
        return A.KsDefault(loc=self._loc(meta))

    def ks_dontcare(self, meta, ch):
        return A.KsDontCare(loc=self._loc(meta))

    def ks_mask(self, meta, ch):
        return A.KsMask(ch[0], ch[2], loc=self._loc(meta))

    def ks_range(self, meta, ch):
        return A.KsRange(ch[0], ch[2], loc=self._loc(meta))

    # ---- controls
    def control_type_decl(self, meta, ch):
        annos, name, tps, params, _c, _r = self._block_header(ch)
        d = A.ControlTypeDecl(name, tps, params, loc=self._loc(meta))
        d.annos = annos
        return d

    def control_decl(self, meta, ch):
        annos, name, tps, params, ctor, rest = self._block_header(ch)
        body = rest[-1]
        local = [r for r in rest[:-1] if not (isinstance(r, Token))]
        d = A.ControlDecl(name, tps, params, ctor, local, body, loc=self._loc(meta))
        d.annos = annos
        return d

    def action_decl(self, meta, ch):
        d = A.ActionDecl(ch[2], ch[3], ch[4], loc=self._loc(meta))
        d.annos = ch[0] or []
        return d

    def table_decl(self, meta, ch):
        d = A.TableDecl(ch[2], list(ch[3:]), loc=self._loc(meta))
        d.annos = ch[0] or []
        return d

    def tp_key(self, meta, ch):
        return A.TableProp("key", _nodes(ch, A.KeyElem), loc=self._loc(meta))

    def tp_actions(self, meta, ch):
        return A.TableProp("actions", _nodes(ch, A.ActionRef), loc=self._loc(meta))

    def tp_entries(self, meta, ch):
        const = any(isinstance(c, Token) and c.type == "CONST" for c in ch)
        return A.TableProp("entries", _nodes(ch, A.TableEntryDecl), const, ch[0] or [], loc=self._loc(meta))

    def tp_other(self, meta, ch):
        const = any(isinstance(c, Token) and c.type == "CONST" for c in ch)
        rest = [c for c in ch[1:] if not (isinstance(c, Token) and c.type == "CONST")]
        return A.TableProp(rest[0], rest[1], const, ch[0] or [], loc=self._loc(meta))

    def key_elem(self, meta, ch):
        return A.KeyElem(ch[0], ch[1], ch[2] or [], loc=self._loc(meta))

    def action_ref(self, meta, ch):
        return A.ActionRef(ch[1], ch[2] if len(ch) > 2 else None, ch[0] or [], loc=self._loc(meta))

    def entry(self, meta, ch):
        annos = ch[0] or []
        rest = list(ch[1:])
        prio = None
        if rest and isinstance(rest[0], Token) and rest[0].type == "PRIORITY":
            prio = rest[1]
            rest = rest[2:]
        return A.TableEntryDecl(rest[0], rest[1], prio, annos + (rest[2] or []), loc=self._loc(meta))

    # ---- statements
    def block(self, meta, ch):
        return A.Block([c for c in ch if c is not None], loc=self._loc(meta))

    def annotated_block(self, meta, ch):
        return ch[1]      # @atomic and friends: no meaning for a sequential target

    def empty_stmt(self, meta, ch):
        return A.Empty(loc=self._loc(meta))

    def exit_stmt(self, meta, ch):
        return A.Exit(loc=self._loc(meta))

    def return_stmt(self, meta, ch):
        return A.Return(ch[1] if len(ch) > 1 else None, loc=self._loc(meta))

    def assignment(self, meta, ch):
        return A.Assign(ch[0], ch[1], loc=self._loc(meta))

    def method_call_stmt(self, meta, ch):
        loc = self._loc(meta)
        return A.CallStmt(A.Call(ch[0], ch[1], [], loc=loc), loc=loc)

    def generic_call_stmt(self, meta, ch):
        loc = self._loc(meta)
        return A.CallStmt(A.Call(ch[0], ch[-1], ch[2], loc=loc), loc=loc)

    def if_stmt(self, meta, ch):
        stmts = [c for c in ch if not isinstance(c, Token)]
        return A.If(stmts[0], stmts[1], stmts[2] if len(stmts) > 2 else None, loc=self._loc(meta))

    def switch_stmt(self, meta, ch):
        return A.Switch(ch[1], list(ch[2:]), loc=self._loc(meta))

    def switch_case(self, meta, ch):
        return A.SwitchCase(ch[0], ch[1] if len(ch) > 1 else None, loc=self._loc(meta))

    def default_label(self, meta, ch):
        return None

    # ---- expressions
    def expr_list(self, meta, ch):
        return list(ch)

    def name_ref(self, meta, ch):
        return A.Name(ch[0], loc=self._loc(meta))

    def global_name_ref(self, meta, ch):
        return A.Name(ch[0], True, loc=self._loc(meta))

    def member(self, meta, ch):
        return A.Member(ch[0], ch[1], loc=self._loc(meta))

    def index(self, meta, ch):
        return A.Index(ch[0], ch[1], loc=self._loc(meta))

    def slice(self, meta, ch):
        return A.Slice(ch[0], ch[1], ch[2], loc=self._loc(meta))

    def call(self, meta, ch):
        return A.Call(ch[0], ch[1], [], loc=self._loc(meta))

    def generic_call(self, meta, ch):
        return A.Call(ch[0], ch[-1], ch[2], loc=self._loc(meta))

    def int_lit(self, meta, ch):
        return parse_int_literal(str(ch[0]), self._loc(meta))

    def true_lit(self, meta, ch):
        return A.BoolLit(True, loc=self._loc(meta))

    def false_lit(self, meta, ch):
        return A.BoolLit(False, loc=self._loc(meta))

    def str_lit(self, meta, ch):
        s = str(ch[0])[1:-1]
        try:
            s = bytes(s, "utf-8").decode("unicode_escape")
        except UnicodeDecodeError:
            pass
        return A.StrLit(s, loc=self._loc(meta))

    def list_expr(self, meta, ch):
        return A.ListExpr(ch[0], loc=self._loc(meta))

    def kv_pair(self, meta, ch):
        return (ch[0], ch[1])

    def struct_init(self, meta, ch):
        return A.StructInit(list(ch), loc=self._loc(meta))

    def type_member(self, meta, ch):
        return A.TypeMember(ch[0], ch[1], loc=self._loc(meta))

    def error_member(self, meta, ch):
        return A.ErrorMember(ch[1], loc=self._loc(meta))

    def ctor_call(self, meta, ch):
        return A.CtorCall(ch[0], ch[1], loc=self._loc(meta))

    def this_expr(self, meta, ch):
        raise P4Error("unsupported: 'this'", self._loc(meta))

    def cond(self, meta, ch):
        return A.Cond(ch[0], ch[1], ch[2], loc=self._loc(meta))

    def binop(self, meta, ch):
        return A.Binary(str(ch[1]), ch[0], ch[2], loc=self._loc(meta))

    def shr(self, meta, ch):
        return A.Binary(">>", ch[0], ch[-1], loc=self._loc(meta))

    def unop(self, meta, ch):
        return A.Unary(str(ch[0]), ch[1], loc=self._loc(meta))

    def cast(self, meta, ch):
        return A.Cast(ch[0], ch[1], loc=self._loc(meta))


_PRETTY = {
    "LPAR": "'('", "RPAR": "')'", "LBRACE": "'{'", "RBRACE": "'}'", "LSQB": "'['", "RSQB": "']'",
    "SEMICOLON": "';'", "COLON": "':'", "COMMA": "','", "EQUAL": "'='", "DOT": "'.'", "QMARK": "'?'",
    "IDENTIFIER": "identifier", "TYPE_IDENTIFIER": "type name", "INTEGER": "integer", "STRING_LITERAL": "string",
    "L_ANGLE_ARGS": "'<'", "R_ANGLE_SHIFT": "'>'", "GT": "'>'", "LT": "'<'", "$END": "end of input",
}


def _pretty_terminal(name: str) -> str:
    if name in _PRETTY:
        return _PRETTY[name]
    try:
        for t in _lark().terminals:
            if t.name == name and t.pattern.type == "str":
                return repr(t.pattern.value)
    except Exception:  # pragma: no cover
        pass
    return name.lower()


def _syntax_error(e: UnexpectedInput, pre: Preprocessed) -> P4SyntaxError:
    loc = pre.loc(getattr(e, "line", 0) or 0, getattr(e, "column", 0) or 0)
    expected = sorted({_pretty_terminal(x) for x in (getattr(e, "expected", None) or getattr(e, "allowed", None)
                                                    or ())})
    exp = ""
    if expected:
        if len(expected) > 8:
            expected = expected[:8] + ["..."]
        exp = "; expected " + ", ".join(expected)
    if isinstance(e, UnexpectedToken):
        tok = e.token
        if tok.type == "$END":
            return P4SyntaxError(f"syntax error: unexpected end of input{exp}", loc)
        raw = set(getattr(e, "expected", None) or ())
        if tok.type == "IDENTIFIER" and "TYPE_IDENTIFIER" in raw and "IDENTIFIER" not in raw:
            return P4SyntaxError(f"unknown type '{tok.value}' (a type name is expected here)", loc)
        return P4SyntaxError(f"syntax error: unexpected {tok.value!r}{exp}", loc)
    if isinstance(e, UnexpectedCharacters):
        ch = pre.text[e.pos_in_stream] if e.pos_in_stream < len(pre.text) else "?"
        return P4SyntaxError(f"syntax error: unexpected character {ch!r}", loc)
    if isinstance(e, UnexpectedEOF):
        return P4SyntaxError(f"syntax error: unexpected end of input{exp}", loc)
    return P4SyntaxError(f"syntax error: {e}", loc)


def parse_preprocessed(pre: Preprocessed) -> A.Program:
    try:
        tree = _lark().parse(pre.text)
    except UnexpectedInput as e:
        raise _syntax_error(e, pre) from None
    try:
        return _Builder(pre).transform(tree)
    except VisitError as e:
        if isinstance(e.orig_exc, P4Error):
            raise e.orig_exc from None
        raise


def parse_source(text: str, filename: str = "<input>", include_dirs: list[str] | None = None) -> A.Program:
    return parse_preprocessed(preprocess(text, filename, include_dirs))


def parse_file(path: str, include_dirs: list[str] | None = None) -> A.Program:
    return parse_preprocessed(preprocess_file(path, include_dirs))


def lex_only(text: str):  # for tests/debugging
    return list(_lark().lex(text))


__all__ = ["parse_source", "parse_file", "parse_preprocessed", "parse_int_literal", "SourceLoc"]
