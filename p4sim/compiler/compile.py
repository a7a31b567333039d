"""Semantic checks and code generation: P4_16 AST -> checked program -> Python source.

One pass over the AST resolves names and types (as P4_16 defines them: no implicit widening, int literals
take the width of the other operand, `int` is arbitrary-precision and compile-time only) and emits Python
source for the parser, controls, actions and tables. The source is compiled once with compile() and bound to a
DeviceState per instantiation (see p4sim.compiler.program).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from p4sim.compiler import ir
from p4sim.compiler import types as T
from p4sim.compiler.emit import Emitter, pyfield, pyident
from p4sim.errors import P4TypeError, P4Unsupported, SourceLoc
from p4sim.frontend import ast as A
from p4sim.frontend.parser import name_loc

V1_ERRORS = ["NoError", "PacketTooShort", "NoMatch", "StackOutOfBounds", "HeaderTooShort", "ParserTimeout",
             "ParserInvalidArgument"]
HASH_ALGOS = ["crc32", "crc32_custom", "crc16", "crc16_custom", "random", "identity", "csum16", "xor16"]


class E:
    """A compiled expression: its P4 type, Python code, compile-time value (or None) and l-value info."""

    __slots__ = ("type", "code", "const", "lv", "loc", "extra")

    def __init__(self, type_, code, const=None, lv=None, loc=None, extra=None):
        self.type = type_
        self.code = code
        self.const = const
        self.lv = lv
        self.loc = loc
        self.extra = extra


class LV:
    """How to assign to an l-value."""

    __slots__ = ("target", "base", "hi", "lo", "type")

    def __init__(self, target=None, base=None, hi=0, lo=0, type_=None):
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
        bt = T.strip_new(self.base.type)
        clear = bt.mask ^ (m << self.lo)
        newval = f"(({self.base.code} & {clear:#x}) | (({val}) << {self.lo}))"
        if bt.signed:
            half = 1 << (bt.width - 1)
            newval = f"((({newval} & {bt.mask:#x}) ^ {half:#x}) - {half:#x})"
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


class Compiler:
    def __init__(self, program: A.Program, filename: str = "<input>"):
        self.program = program
        self.filename = filename
        self.types: dict[str, Any] = {}           # name -> Type | ("extern", decl) | ("block", decl)
        self.globals: dict[str, Sym] = {}
        self.scopes: list[dict[str, Sym]] = []
        self.errors: list[str] = []
        self.match_kinds: list[str] = []
        self.info = ir.ProgramInfo()
        self.out = Emitter()            # module-level code
        self.classes: dict[int, str] = {}
        self.class_code = Emitter()
        self.tvars: list[dict[str, T.Type]] = []
        self.bind: list[tuple[str, str, str]] = []   # (python name, kind, runtime object name)
        self.py_names: set[str] = set()
        self.ctx: Ctx | None = None
        self.tmp_counter = 0
        self.field_lists: list[tuple] = []   # preserve functions
        self.field_list_by_index: dict[int, str] = {}
        self.blocks: dict[str, Any] = {}
        self.v1 = {}
        self.compiled_blocks: dict[str, str] = {}
        self.rand_used = False
        self.hash_algos: set[str] = set()
        self.obj_paths: set[str] = set()     # python paths of header/struct objects (stable per packet)

    # ------------------------------------------------------------------ utilities
    def err(self, msg, node_or_loc, cls=P4TypeError):
        loc = node_or_loc if isinstance(node_or_loc, SourceLoc) or node_or_loc is None else _loc(node_or_loc)
        return cls(msg, loc)

    def unique(self, base: str) -> str:
        base = pyident(base)
        name = base
        i = 1
        while name in self.py_names:
            i += 1
            name = f"{base}_{i}"
        self.py_names.add(name)
        return name

    def tmp(self) -> str:
        self.tmp_counter += 1
        return f"_t{self.tmp_counter}"

    def push(self):
        self.scopes.append({})

    def pop(self):
        self.scopes.pop()

    def declare(self, name: str, sym: Sym, node) -> None:
        scope = self.scopes[-1] if self.scopes else self.globals
        if name in scope:
            prev = scope[name]
            # extern functions and methods may be overloaded; everything else is a duplicate
            if not (prev.kind == "extern_func" and sym.kind == "extern_func"):
                where = f" (previous declaration at {prev.loc})" if prev.loc else ""
                raise self.err(f"duplicate declaration of '{name}'{where}", node)
            prev.decl = prev.decl + sym.decl
            return
        sym.loc = sym.loc or _loc(node)
        scope[name] = sym

    def lookup(self, name: str, node, glob=False) -> Sym:
        if not glob:
            for scope in reversed(self.scopes):
                if name in scope:
                    return scope[name]
        if name in self.globals:
            return self.globals[name]
        raise self.err(f"unknown name '{name}'", node)

    def lookup_opt(self, name: str):
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return self.globals.get(name)

    # ------------------------------------------------------------------ types
    def resolve_type(self, tref) -> T.Type:
        if isinstance(tref, T.Type):
            return tref
        if isinstance(tref, A.BitType):
            w = self.const_int(tref.width, "bit width")
            if w <= 0 or (tref.signed and w < 1):
                raise self.err(f"bit width must be positive, not {w}", tref)
            return T.Bits(w, tref.signed)
        if isinstance(tref, A.BoolType):
            return T.BOOL
        if isinstance(tref, A.ErrorTypeRef):
            return T.ERROR
        if isinstance(tref, A.StringTypeRef):
            return T.STRING
        if isinstance(tref, A.VoidType):
            return T.VOID
        if isinstance(tref, A.IntInfType):
            return T.INFINT
        if isinstance(tref, A.MatchKindTypeRef):
            return T.MATCH_KIND
        if isinstance(tref, A.DontCareType):
            return T.DONTCARE
        if isinstance(tref, A.VarbitType):
            return T.Varbit(self.const_int(tref.width, "varbit width"))
        if isinstance(tref, A.TupleType):
            return T.TupleT(tuple(self.resolve_type(x) for x in tref.args))
        if isinstance(tref, A.StackType):
            elem = self.resolve_type(tref.elem)
            if not isinstance(elem, T.HeaderT | T.UnionT):
                raise self.err(f"header stack elements must be headers, not {elem}", tref)
            n = self.const_int(tref.size, "header stack size")
            if n <= 0:
                raise self.err("header stack size must be positive", tref)
            return T.StackT(elem, n)
        if isinstance(tref, A.NamedType):
            for tv in reversed(self.tvars):
                if tref.name in tv:
                    return tv[tref.name]
            t = self.types.get(tref.name)
            if t is None:
                raise self.err(f"unknown type '{tref.name}'", tref)
            if isinstance(t, tuple):
                kind, decl = t
                if kind == "extern":
                    args = tuple(self.resolve_type(a) for a in tref.args)
                    if tref.args and len(tref.args) > len(decl.type_params):
                        raise self.err(f"extern {decl.name} takes {len(decl.type_params)} type arguments, "
                                       f"got {len(tref.args)}", tref)
                    return T.ExternT(decl.name, decl, args)
                return T.BlockT(kind, decl.name, decl)
            if tref.args:
                raise self.err(f"type '{tref.name}' takes no type arguments", tref)
            return t
        raise self.err(f"unsupported type {type(tref).__name__}", tref, P4Unsupported)

    def const_int(self, expr, what="value") -> int:
        e = self.expr(expr)
        if e.const is None or isinstance(e.const, bool) or not isinstance(e.const, int):
            raise self.err(f"{what} must be a compile-time integer constant", expr)
        return e.const

    # ------------------------------------------------------------------ python classes for data types
    def pyclass(self, t) -> str:
        t = T.strip_new(t)
        key = id(t)
        if key in self.classes:
            return self.classes[key]
        if isinstance(t, T.HeaderT):
            name = self.unique("H_" + t.name)
        elif isinstance(t, T.UnionT):
            name = self.unique("U_" + t.name)
        else:
            name = self.unique("S_" + t.name)
        self.classes[key] = name
        fields = [(pyfield(f), ft) for f, ft in t.fields.items()]
        em = Emitter()
        slots = (["_v"] if isinstance(t, T.HeaderT) else []) + [f for f, _ in fields]
        em(f"class {name}:")
        em.indent()
        em(f"__slots__ = {tuple(slots)!r}")
        em("def __init__(self):")
        em.indent()
        if isinstance(t, T.HeaderT):
            em("self._v = False")
        for f, ft in fields:
            em(f"self.{f} = {self.default_value(ft)}")
        if not slots:
            em("pass")
        em.dedent()
        em("def _set(self, o):")
        em.indent()
        if isinstance(t, T.HeaderT):
            em("self._v = o._v")
        for f, ft in fields:
            if ft.is_scalar:
                em(f"self.{f} = o.{f}")
            else:
                em(f"self.{f}._set(o.{f})")
        em("return self")
        em.dedent()
        em("def _copy(self):")
        em.indent()
        em(f"n = {name}.__new__({name})")
        if isinstance(t, T.HeaderT):
            em("n._v = self._v")
        for f, ft in fields:
            em(f"n.{f} = self.{f}" + ("" if ft.is_scalar else "._copy()"))
        em("return n")
        em.dedent()
        em("def _eq(self, o):")
        em.indent()
        parts = []
        for f, ft in fields:
            parts.append(f"self.{f} == o.{f}" if ft.is_scalar else f"self.{f}._eq(o.{f})")
        if isinstance(t, T.HeaderT):
            em(f"return self._v == o._v and (not self._v or ({' and '.join(parts) or 'True'}))")
        else:
            em(f"return {' and '.join(parts) or 'True'}")
        em.dedent()
        em("@staticmethod")
        em(f"def _mk({', '.join(f'a{i}' for i in range(len(fields)))}):")
        em.indent()
        em(f"n = {name}.__new__({name})")
        if isinstance(t, T.HeaderT):
            em("n._v = True")
        for i, (f, _ft) in enumerate(fields):
            em(f"n.{f} = a{i}")
        em("return n")
        em.dedent()
        if isinstance(t, T.HeaderT):
            em("@staticmethod")
            em("def _unpack(v):")
            em.indent()
            em(f"n = {name}()")
            for line in self.header_unpack_lines(t, "n", "v"):
                em(line)
            em("n._v = True")
            em("return n")
            em.dedent()
        if isinstance(t, T.HeaderT):
            em("def _setinvalid(self):")
            em.indent()
            em("self._v = False")
            em.dedent()
        if isinstance(t, T.UnionT):
            em("def _valid(self):")
            em.indent()
            em(f"return {' or '.join(f'self.{f}._v' for f, _ in fields) or 'False'}")
            em.dedent()
            em("def _setinvalid(self):")
            em.indent()
            for f, _ in fields:
                em(f"self.{f}._v = False")
            em("pass")
            em.dedent()
        em.dedent()
        self.class_code.extend(em)
        return name

    def default_value(self, t) -> str:
        t = T.strip_new(t)
        if isinstance(t, T.Bits | T.InfIntT | T.Varbit):
            return "0"
        if isinstance(t, T.BoolT):
            return "False"
        if isinstance(t, T.ErrorT):
            return "0"
        if isinstance(t, T.EnumT):
            return "0" if t.base is None else "0"
        if isinstance(t, T.StringT):
            return "''"
        if isinstance(t, T.HeaderT | T.StructT | T.UnionT):
            return f"{self.pyclass(t)}()"
        if isinstance(t, T.StackT):
            return f"_Stack({self.pyclass(t.elem)}, {t.size})"
        if isinstance(t, T.TupleT):
            return "(" + "".join(self.default_value(x) + ", " for x in t.items) + ")"
        return "None"

    # ------------------------------------------------------------------ top-level declarations
    def run(self):
        main = None
        for d in self.program.decls:
            if isinstance(d, A.Instantiation) and not self._is_extern_type(d.type):
                if main is not None and d.name == "main":
                    raise self.err("duplicate declaration of 'main'", d)
                t = self.resolve_type(d.type)
                if isinstance(t, T.BlockT) and t.kind == "package":
                    main = d
                    self.declare(d.name, Sym("block", t, decl=d), d)
                    continue
                if isinstance(t, T.BlockT):
                    self.declare(d.name, Sym("block", t, decl=d), d)
                    continue
            self.top_decl(d)
        if main is None:
            raise self.err("no 'main' package instantiation (expected e.g. V1Switch(...) main;)",
                           SourceLoc(self.filename, 1, 1))
        self.compile_main(main)

    def _is_extern_type(self, tref) -> bool:
        return isinstance(tref, A.NamedType) and isinstance(self.types.get(tref.name), tuple) \
            and self.types[tref.name][0] == "extern"

    def declare_type(self, name, t, node):
        if name in self.types:
            raise self.err(f"duplicate declaration of type '{name}'", node)
        self.types[name] = t

    def top_decl(self, d):
        if isinstance(d, A.ErrorDecl):
            for m in d.members:
                if m in self.info.errors:
                    raise self.err(f"duplicate error member '{m}'", d)
                self.info.errors.append(m)
            return
        if isinstance(d, A.MatchKindDecl):
            for m in d.members:
                if m in self.match_kinds:
                    raise self.err(f"duplicate match_kind '{m}'", d)
                self.match_kinds.append(m)
                self.declare(m, Sym("const", T.MATCH_KIND, repr(m), m), d)
            return
        if isinstance(d, A.HeaderDecl | A.StructDecl | A.HeaderUnionDecl):
            self.type_decl(d)
            return
        if isinstance(d, A.EnumDecl):
            self.enum_decl(d)
            return
        if isinstance(d, A.TypedefDecl):
            t = self.resolve_type(d.type)
            self.declare_type(d.name, T.NewT(d.name, t) if d.newtype else t, d)
            return
        if isinstance(d, A.ConstDecl):
            self.const_decl(d)
            return
        if isinstance(d, A.ExternDecl):
            self.declare_type(d.name, ("extern", d), d)
            return
        if isinstance(d, A.ExternFunc):
            self.declare(d.name, Sym("extern_func", decl=[d.proto]), d)
            return
        if isinstance(d, A.ParserTypeDecl | A.ControlTypeDecl):
            self.declare_type(d.name, ("parser" if isinstance(d, A.ParserTypeDecl) else "control", d), d)
            return
        if isinstance(d, A.PackageDecl):
            self.declare_type(d.name, ("package", d), d)
            return
        if isinstance(d, A.ParserDecl | A.ControlDecl):
            kind = "parser" if isinstance(d, A.ParserDecl) else "control"
            if d.type_params:
                raise self.err(f"unsupported: generic {kind} declarations", d, P4Unsupported)
            self.declare_type(d.name, (kind, d), d)
            self.blocks[d.name] = d
            return
        if isinstance(d, A.ActionDecl):
            self.ctx = Ctx("control", "", "", False)
            self.action_decl(d, "")
            self.ctx = None
            return
        if isinstance(d, A.FunctionDecl):
            self.function_decl(d)
            return
        if isinstance(d, A.Instantiation):
            self.ctx = Ctx("control", "", "", False)
            self.instantiation(d, "")
            self.ctx = None
            return
        if isinstance(d, A.VarDecl):
            raise self.err("variables cannot be declared at the top level", d)
        raise self.err(f"unsupported declaration {type(d).__name__}", d, P4Unsupported)

    def type_decl(self, d):
        if isinstance(d, A.HeaderDecl):
            t = T.HeaderT(d.name)
        elif isinstance(d, A.StructDecl):
            t = T.StructT(d.name)
        else:
            t = T.UnionT(d.name)
        t.decl_annos = d.annos
        self.declare_type(d.name, t, d)
        for f in d.fields:
            if f.name in t.fields:
                raise self.err(f"duplicate field '{f.name}' in {d.name}", f)
            ft = self.resolve_type(f.type)
            base = T.strip_new(ft)
            if isinstance(t, T.HeaderT):
                if isinstance(base, T.Varbit):
                    raise self.err("unsupported: varbit header fields", f, P4Unsupported)
                if not (isinstance(base, T.Bits | T.BoolT) or (isinstance(base, T.EnumT) and base.base)):
                    raise self.err(f"header field '{f.name}' has type {ft}; header fields must be bit<N>, int<N>, "
                                   "bool or a serializable enum", f)
            if isinstance(t, T.UnionT) and not isinstance(base, T.HeaderT):
                raise self.err(f"header_union member '{f.name}' must be a header", f)
            t.fields[f.name] = ft
            t.annos[f.name] = f.annos
        if isinstance(t, T.HeaderT):
            if t.width % 8:
                raise self.err(f"header {d.name} is {t.width} bits long; p4sim (like BMv2) needs headers to be a "
                               "multiple of 8 bits", d)
            ch = _anno_arg(d.annos, "controller_header")
            if ch is not None:
                self.info.controller_headers[ch] = ir.ControllerHeaderInfo(
                    ch, d.name, [(n, T.bit_width(ft), t.annos[n]) for n, ft in t.fields.items()], d.annos)

    def enum_decl(self, d):
        if d.base is None:
            t = T.EnumT(d.name, list(d.members), None, {m: i for i, m in enumerate(d.members)})
        else:
            base = T.strip_new(self.resolve_type(d.base))
            if not isinstance(base, T.Bits):
                raise self.err(f"serializable enum must have a bit<N> or int<N> base type, not {base}", d)
            vals = {}
            for m, v in zip(d.members, d.values, strict=True):
                e = self.expr(v, base)
                if e.const is None:
                    raise self.err(f"value of enum member {m} must be a compile-time constant", v)
                vals[m] = wrap(e.const, base)
            t = T.EnumT(d.name, list(d.members), base, vals)
        if len(set(d.members)) != len(d.members):
            raise self.err(f"duplicate member in enum {d.name}", d)
        self.declare_type(d.name, t, d)

    def const_decl(self, d):
        t = self.resolve_type(d.type)
        e = self.coerce(self.expr(d.value, t), t, d.value, f"constant {d.name}")
        if e.const is None:
            raise self.err(f"initializer of constant '{d.name}' is not a compile-time constant", d.value)
        self.declare(d.name, Sym("const", t, e.code, e.const, decl=d), d)

    # ------------------------------------------------------------------ expressions
    def wrapcode(self, code: str, t: T.Bits) -> str:
        if t.signed:
            h = 1 << (t.width - 1)
            return f"(((({code}) + {h:#x}) & {t.mask:#x}) - {h:#x})"
        return f"(({code}) & {t.mask:#x})"

    def lit(self, v, t) -> E:
        if isinstance(v, bool):
            return E(t, "True" if v else "False", v)
        if isinstance(v, int):
            return E(t, repr(v) if -10 < v < 10 or v < 0 else hex(v), v)
        return E(t, repr(v), v)

    def coerce(self, e: E, t, node, what="value") -> E:
        st = e.type
        if st is t or T.same_type(st, t):
            return e
        bt = T.strip_new(t)
        bs = T.strip_new(st)
        if isinstance(bt, T.DontCareT) or isinstance(bt, T.TypeVar):
            return e
        if isinstance(bs, T.InfIntT):
            if isinstance(bt, T.Bits):
                if e.const is None:
                    raise self.err(f"{what}: an 'int' value that is not a compile-time constant cannot be used "
                                   f"as {t}", node)
                return self.lit(wrap(e.const, bt), t)
            if isinstance(bt, T.InfIntT):
                return e
        if (isinstance(st, T.NewT) or isinstance(t, T.NewT)) and T.same_type(bs, bt):
            return E(t, e.code, e.const, e.lv, e.loc)
        if isinstance(bs, T.ListT) and isinstance(bt, T.HeaderT | T.StructT | T.TupleT):
            items = e.extra
            ftypes = list(bt.items) if isinstance(bt, T.TupleT) else list(bt.fields.values())
            if len(items) != len(ftypes):
                raise self.err(f"{what}: {len(items)} values given for {t}, which has {len(ftypes)} fields", node)
            vals = [self.coerce(it, ft, node, what) for it, ft in zip(items, ftypes, strict=True)]
            if isinstance(bt, T.TupleT):
                return E(t, "(" + "".join(self.objval(v) + ", " for v in vals) + ")")
            return E(t, f"{self.pyclass(bt)}._mk({', '.join(self.objval(v) for v in vals)})")
        if isinstance(bs, T.StructInitT) and isinstance(bt, T.HeaderT | T.StructT):
            given = e.extra
            for k in given:
                if k not in bt.fields:
                    raise self.err(f"{what}: {t} has no field '{k}'", node)
            missing = [k for k in bt.fields if k not in given]
            if missing:
                raise self.err(f"{what}: no value for field(s) {', '.join(missing)} of {t}", node)
            vals = [self.coerce(given[k], ft, node, what) for k, ft in bt.fields.items()]
            return E(t, f"{self.pyclass(bt)}._mk({', '.join(self.objval(v) for v in vals)})")
        if isinstance(bs, T.Bits) and isinstance(bt, T.Bits):
            raise self.err(f"{what}: cannot convert {st} to {t} implicitly (an explicit cast is needed)", node)
        raise self.err(f"{what}: type {st} does not match expected type {t}", node)

    def objval(self, e: E) -> str:
        """Code for a value to be stored: objects are copied (P4 has value semantics)."""
        if not T.strip_new(e.type).is_scalar and not isinstance(e.type, T.ListT | T.StructInitT):
            if isinstance(T.strip_new(e.type), T.TupleT):
                return e.code
            if e.lv is not None or e.extra == "ref":
                return f"{e.code}._copy()"
        return e.code

    def expr(self, node, expected=None) -> E:
        m = getattr(self, "x_" + type(node).__name__, None)
        if m is None:
            raise self.err(f"unsupported expression {type(node).__name__}", node, P4Unsupported)
        e = m(node, expected) if type(node).__name__ in ("ListExpr", "StructInit", "Cond") else m(node)
        e.loc = _loc(node)
        return e

    def x_IntLit(self, n):
        if n.width is None:
            return self.lit(n.value, T.INFINT)
        t = T.Bits(n.width, n.signed)
        return self.lit(wrap(n.value, t), t)

    def x_BoolLit(self, n):
        return self.lit(n.value, T.BOOL)

    def x_StrLit(self, n):
        return E(T.STRING, repr(n.value), n.value)

    def x_ErrorMember(self, n):
        if n.name not in self.info.errors:
            raise self.err(f"unknown error 'error.{n.name}'", name_loc(n.name, n.loc))
        i = self.info.errors.index(n.name)
        return self.lit(i, T.ERROR)

    def x_TypeMember(self, n):
        t = self.resolve_type(n.type)
        bt = T.strip_new(t)
        if isinstance(bt, T.EnumT):
            if n.name not in bt.values:
                raise self.err(f"enum {bt.name} has no member '{n.name}'", name_loc(n.name, n.loc))
            return self.lit(bt.values[n.name], t)
        if isinstance(bt, T.ErrorT):
            return self.x_ErrorMember(A.ErrorMember(n.name, loc=n.loc))
        raise self.err(f"type {t} has no member '{n.name}'", name_loc(n.name, n.loc))

    def x_Name(self, n):
        s = self.lookup(n.name, n, n.glob)
        if s.kind == "const":
            return E(s.type, s.py, s.const)
        if s.kind in ("var", "param"):
            lv = None if s.direction == "in" or s.kind == "const" else LV(s.py, type_=s.type)
            e = E(s.type, s.py, None, lv)
            if s.direction == "in" and not T.strip_new(s.type).is_scalar:
                e.extra = "ref"
            return e
        if s.kind == "table":
            return E(T.TableT(s.info), s.py, extra=s)
        if s.kind == "instance":
            return E(s.type, s.py, extra=s)
        if s.kind in ("action", "extern_func", "function", "block"):
            return E(T.VOID, s.py, extra=s)
        if s.kind == "state":
            raise self.err(f"parser state '{n.name}' used as a value", n)
        raise self.err(f"'{n.name}' cannot be used here", n)

    def x_Member(self, n):
        base = self.expr(n.expr)
        bt = T.strip_new(base.type)
        name = n.name
        if isinstance(bt, T.HeaderT | T.StructT | T.UnionT):
            if name in bt.fields:
                ft = bt.fields[name]
                code = f"{base.code}.{pyfield(name)}"
                if not T.strip_new(ft).is_scalar:
                    self.obj_paths.add(code)
                e = E(ft, code, None, LV(code, type_=ft) if base.lv is not None else None)
                if base.extra == "ref":
                    e.extra = "ref"
                return e
            if name in ("isValid", "setValid", "setInvalid", "minSizeInBits", "minSizeInBytes", "maxSizeInBits",
                        "maxSizeInBytes"):
                return E(T.VOID, "", extra=("method", base, name, n))
            raise self.err(f"{base.type} has no field '{name}'", name_loc(name, n.loc))
        if isinstance(bt, T.StackT):
            if name == "size":
                return self.lit(bt.size, T.Bits(32))
            if name == "next":
                code = f"{base.code}.h[{base.code}.nxt]"
                return E(bt.elem, code, None, LV(code, type_=bt.elem) if base.lv is not None else None,
                         extra=("stack_next", base))
            if name == "last":
                code = f"_stack_last({base.code})"
                return E(bt.elem, code, None, LV(code, type_=bt.elem) if base.lv is not None else None,
                         extra=("stack_last", base))
            if name == "lastIndex":
                return E(T.Bits(32), f"(({base.code}.nxt - 1) & 0xffffffff)")
            if name in ("push_front", "pop_front"):
                return E(T.VOID, "", extra=("method", base, name, n))
            raise self.err(f"header stack has no member '{name}'", n)
        if isinstance(bt, T.TableT):
            if name == "apply":
                return E(T.VOID, "", extra=("method", base, name, n))
            raise self.err(f"table has no member '{name}'", n)
        if isinstance(bt, T.ApplyResultT):
            if name == "hit":
                return E(T.BOOL, f"{base.code}.hit")
            if name == "miss":
                return E(T.BOOL, f"(not {base.code}.hit)")
            if name == "action_run":
                return E(T.ActionRunT(bt.table), f"{base.code}.action.action")
            raise self.err(f"table apply result has no member '{name}' (hit, miss, action_run)", n)
        if isinstance(bt, T.ExternT | T.BlockT):
            return E(T.VOID, "", extra=("method", base, name, n))
        raise self.err(f"{base.type} has no member '{name}'", n)

    def x_Index(self, n):
        base = self.expr(n.expr)
        bt = T.strip_new(base.type)
        if isinstance(bt, T.StackT):
            idx = self.expr(n.index)
            if idx.const is not None:
                if not 0 <= idx.const < bt.size:
                    raise self.err(f"index {idx.const} out of range for header stack of size {bt.size}", n.index)
                code = f"{base.code}.h[{idx.const}]"
            else:
                if not isinstance(T.strip_new(idx.type), T.Bits):
                    raise self.err(f"header stack index must be bit<N>, not {idx.type}", n.index)
                code = f"{base.code}.h[{idx.code}]"
            return E(bt.elem, code, None, LV(code, type_=bt.elem) if base.lv is not None else None)
        if isinstance(bt, T.TupleT):
            i = self.const_int(n.index, "tuple index")
            if not 0 <= i < len(bt.items):
                raise self.err(f"tuple index {i} out of range", n.index)
            return E(bt.items[i], f"{base.code}[{i}]")
        raise self.err(f"cannot index a value of type {base.type}", n)

    def x_Slice(self, n):
        base = self.expr(n.expr)
        bt = T.strip_new(base.type)
        hi = self.const_int(n.hi, "slice bound")
        lo = self.const_int(n.lo, "slice bound")
        if isinstance(bt, T.InfIntT) and base.const is not None:
            w = hi - lo + 1
            return self.lit((base.const >> lo) & ((1 << w) - 1), T.Bits(w))
        if not isinstance(bt, T.Bits):
            raise self.err(f"cannot slice a value of type {base.type}", n)
        if not (0 <= lo <= hi < bt.width):
            raise self.err(f"slice [{hi}:{lo}] out of range for {base.type}", n)
        w = hi - lo + 1
        t = T.Bits(w)
        if base.const is not None:
            return self.lit((base.const >> lo) & t.mask, t)
        if lo == 0 and hi == bt.width - 1 and not bt.signed:
            code = base.code
        elif lo == 0:
            code = f"({base.code} & {t.mask:#x})"
        elif hi == bt.width - 1 and not bt.signed:
            code = f"({base.code} >> {lo})"
        else:
            code = f"(({base.code} >> {lo}) & {t.mask:#x})"
        lv = LV(base=base, hi=hi, lo=lo, type_=t) if base.lv is not None else None
        return E(t, code, None, lv)

    def x_ListExpr(self, n, expected=None):
        bt = T.strip_new(expected) if expected is not None else None
        if isinstance(bt, T.HeaderT | T.StructT | T.TupleT):
            ftypes = list(bt.items) if isinstance(bt, T.TupleT) else list(bt.fields.values())
            if len(ftypes) == len(n.items):
                items = [self.expr(x, ft) for x, ft in zip(n.items, ftypes, strict=True)]
                return self.coerce(E(T.ListT([i.type for i in items]), "", extra=items), expected, n, "initializer")
        items = [self.expr(x) for x in n.items]
        return E(T.ListT([i.type for i in items]), "(" + "".join(i.code + ", " for i in items) + ")", extra=items)

    def x_StructInit(self, n, expected=None):
        bt = T.strip_new(expected) if expected is not None else None
        fields = {}
        for k, v in n.fields:
            if k in fields:
                raise self.err(f"field '{k}' given twice", v)
            ft = bt.fields.get(k) if isinstance(bt, T.HeaderT | T.StructT) else None
            fields[k] = self.expr(v, ft)
        e = E(T.StructInitT({k: v.type for k, v in fields.items()}), "", extra=fields)
        if isinstance(bt, T.HeaderT | T.StructT):
            return self.coerce(e, expected, n, "initializer")
        return e

    def x_CtorCall(self, n):
        raise self.err("constructor call is only allowed in an instantiation or table property", n)

    def x_Cond(self, n, expected=None):
        c = self.coerce(self.expr(n.cond), T.BOOL, n.cond, "condition of ?:")
        a = self.expr(n.then, expected)
        b = self.expr(n.other, expected)
        a, b = self.unify(a, b, n, "?:")
        if c.const is not None:
            return a if c.const else b
        if isinstance(a.type, T.InfIntT):
            if expected is not None and isinstance(T.strip_new(expected), T.Bits):
                a = self.coerce(a, expected, n)
                b = self.coerce(b, expected, n)
            else:
                raise self.err("the branches of ?: are both 'int': give them a width (e.g. 8w1)", n)
        return E(a.type, f"({a.code} if {c.code} else {b.code})")

    def unify(self, a: E, b: E, node, op) -> tuple[E, E]:
        ta, tb = T.strip_new(a.type), T.strip_new(b.type)
        if T.same_type(a.type, b.type):
            return a, b
        if isinstance(ta, T.InfIntT) and not isinstance(tb, T.InfIntT):
            return self.coerce(a, b.type, node, f"operand of '{op}'"), b
        if isinstance(tb, T.InfIntT) and not isinstance(ta, T.InfIntT):
            return a, self.coerce(b, a.type, node, f"operand of '{op}'")
        if T.same_type(ta, tb):
            return a, b
        if isinstance(ta, T.EnumT) and ta.base is not None and T.same_type(ta.base, tb):
            raise self.err(f"operands of '{op}' have different types {a.type} and {b.type} (cast needed)", node)
        raise self.err(f"operands of '{op}' have different types {a.type} and {b.type}", node)

    def x_Unary(self, n):
        e = self.expr(n.expr)
        t = T.strip_new(e.type)
        op = n.op
        if op == "!":
            e = self.coerce(e, T.BOOL, n.expr, "operand of '!'")
            if e.const is not None:
                return self.lit(not e.const, T.BOOL)
            return E(T.BOOL, f"(not {e.code})")
        if isinstance(t, T.InfIntT):
            if e.const is None:
                raise self.err(f"operand of '{op}' must be a constant", n)
            if op == "-":
                return self.lit(-e.const, T.INFINT)
            if op == "+":
                return e
            raise self.err("operator '~' needs an operand with a width (bit<N> or int<N>), not 'int'", n)
        if not isinstance(t, T.Bits):
            raise self.err(f"operator '{op}' cannot be applied to {e.type}", n)
        if op == "+":
            return E(e.type, e.code, e.const)
        if e.const is not None:
            v = -e.const if op == "-" else ~e.const
            return self.lit(wrap(v, t), e.type)
        if op == "-":
            return E(e.type, self.wrapcode(f"-{e.code}", t))
        if t.signed:
            return E(e.type, f"(~{e.code})")
        return E(e.type, f"({e.code} ^ {t.mask:#x})")

    _CMP = {"==": "==", "!=": "!=", "<": "<", ">": ">", "<=": "<=", ">=": ">="}

    def x_Binary(self, n):
        op = n.op
        if op in ("&&", "||"):
            a = self.coerce(self.expr(n.left), T.BOOL, n.left, f"operand of '{op}'")
            b = self.coerce(self.expr(n.right), T.BOOL, n.right, f"operand of '{op}'")
            if a.const is not None and b.const is not None:
                return self.lit((a.const and b.const) if op == "&&" else (a.const or b.const), T.BOOL)
            return E(T.BOOL, f"({a.code} {'and' if op == '&&' else 'or'} {b.code})")
        a = self.expr(n.left)
        b = self.expr(n.right)
        if op in ("<<", ">>"):
            return self.shift(n, op, a, b)
        if op == "++":
            return self.concat(n, a, b)
        a, b = self.unify(a, b, n, op)
        t = T.strip_new(a.type)
        if op in ("==", "!="):
            if isinstance(t, T.HeaderT | T.StructT | T.UnionT | T.StackT):
                code = f"{a.code}._eq({b.code})"
                return E(T.BOOL, code if op == "==" else f"(not {code})")
            if isinstance(t, T.ListT | T.StructInitT | T.ExternT | T.BlockT | T.TableT | T.VoidT):
                raise self.err(f"cannot compare values of type {a.type}", n)
            if a.const is not None and b.const is not None:
                return self.lit((a.const == b.const) == (op == "=="), T.BOOL)
            return E(T.BOOL, f"({a.code} {op} {b.code})")
        if op in ("<", ">", "<=", ">="):
            if not isinstance(t, T.Bits | T.InfIntT):
                raise self.err(f"operator '{op}' needs numeric operands, not {a.type}", n)
            if a.const is not None and b.const is not None:
                return self.lit(eval(f"{a.const} {op} {b.const}"), T.BOOL)  # noqa: S307 - ints only
            return E(T.BOOL, f"({a.code} {op} {b.code})")
        if isinstance(t, T.InfIntT):
            if a.const is None or b.const is None:
                raise self.err(f"operands of '{op}' with type 'int' must be compile-time constants", n)
            x, y = a.const, b.const
            if op in ("/", "%") and y == 0:
                raise self.err("division by zero", n)
            if op in ("|+|", "|-|"):
                raise self.err(f"operator '{op}' needs operands with a width", n)
            v = {"+": lambda: x + y, "-": lambda: x - y, "*": lambda: x * y, "/": lambda: x // y,
                 "%": lambda: x % y, "&": lambda: x & y, "|": lambda: x | y, "^": lambda: x ^ y}[op]()
            return self.lit(v, T.INFINT)
        if not isinstance(t, T.Bits):
            raise self.err(f"operator '{op}' cannot be applied to {a.type}", n)
        rt = a.type
        if a.const is not None and b.const is not None:
            x, y = a.const, b.const
            if op in ("/", "%"):
                if y == 0:
                    raise self.err("division by zero", n)
                if t.signed:
                    raise self.err(f"operator '{op}' is not defined on signed values", n)
            v = {"+": lambda: x + y, "-": lambda: x - y, "*": lambda: x * y, "/": lambda: x // (y or 1),
                 "%": lambda: x % (y or 1), "&": lambda: x & y, "|": lambda: x | y, "^": lambda: x ^ y,
                 "|+|": lambda: self._sat(x + y, t), "|-|": lambda: self._sat(x - y, t)}[op]()
            return self.lit(wrap(v, t), rt)
        ac, bc = a.code, b.code
        if op in ("+", "-", "*"):
            return E(rt, self.wrapcode(f"{ac} {op} {bc}", t))
        if op in ("&", "|", "^"):
            return E(rt, f"({ac} {op} {bc})")
        if op in ("/", "%"):
            if t.signed:
                raise self.err(f"operator '{op}' is not defined on signed values", n)
            if b.const is not None:
                if b.const == 0:
                    raise self.err("division by zero", n)
                return E(rt, f"({ac} {'//' if op == '/' else '%'} {bc})")
            return E(rt, f"(({ac} {'//' if op == '/' else '%'} {bc}) if {bc} else 0)")
        if op == "|+|":
            if t.signed:
                return E(rt, f"_sat_add_signed({ac}, {bc}, {t.width})")
            return E(rt, f"min({ac} + {bc}, {t.mask:#x})")
        if op == "|-|":
            if t.signed:
                return E(rt, f"_sat_add_signed({ac}, -{bc}, {t.width})")
            return E(rt, f"max({ac} - {bc}, 0)")
        raise self.err(f"unknown operator '{op}'", n)

    @staticmethod
    def _sat(v, t):
        lo = -(1 << (t.width - 1)) if t.signed else 0
        hi = (1 << (t.width - 1)) - 1 if t.signed else t.mask
        return max(lo, min(hi, v))

    def shift(self, n, op, a, b):
        ta, tb = T.strip_new(a.type), T.strip_new(b.type)
        if isinstance(tb, T.Bits):
            if tb.signed:
                raise self.err(f"shift amount must be unsigned, not {b.type}", n.right)
        elif isinstance(tb, T.InfIntT):
            if b.const is None or b.const < 0:
                raise self.err("shift amount must be a non-negative constant or an unsigned value", n.right)
        else:
            raise self.err(f"shift amount must be a number, not {b.type}", n.right)
        if isinstance(ta, T.InfIntT):
            if a.const is None or b.const is None:
                raise self.err("the left operand of a shift must have a width (bit<N>/int<N>) unless both "
                               "operands are constants", n)
            return self.lit(a.const << b.const if op == "<<" else a.const >> b.const, T.INFINT)
        if not isinstance(ta, T.Bits):
            raise self.err(f"cannot shift a value of type {a.type}", n)
        if a.const is not None and b.const is not None:
            v = (a.const << b.const) if op == "<<" else (a.const >> b.const)
            return self.lit(wrap(v, ta), a.type)
        if op == ">>":
            if b.const is not None and b.const >= ta.width:
                return E(a.type, f"(-1 if {a.code} < 0 else 0)" if ta.signed else "0")
            return E(a.type, f"({a.code} >> {b.code})")
        if b.const is not None:
            if b.const >= ta.width:
                return self.lit(0, a.type)
            return E(a.type, self.wrapcode(f"{a.code} << {b.const}", ta))
        if ta.signed:
            return E(a.type, f"_shl_signed({a.code}, {b.code}, {ta.width})")
        return E(a.type, f"_shl({a.code}, {b.code}, {ta.width}, {ta.mask:#x})")

    def concat(self, n, a, b):
        ta, tb = T.strip_new(a.type), T.strip_new(b.type)
        if not isinstance(ta, T.Bits) or not isinstance(tb, T.Bits):
            if isinstance(ta, T.InfIntT) or isinstance(tb, T.InfIntT):
                raise self.err("operands of '++' need a width (bit<N>/int<N>); cast the 'int' literal", n)
            raise self.err(f"operator '++' needs bit<N>/int<N> operands, not {a.type} and {b.type}", n)
        t = T.Bits(ta.width + tb.width, ta.signed)
        if a.const is not None and b.const is not None:
            return self.lit(wrap((a.const << tb.width) | (b.const & tb.mask), t), t)
        bc = f"({b.code} & {tb.mask:#x})" if tb.signed else b.code
        return E(t, f"(({a.code} << {tb.width}) | {bc})")

    def x_Cast(self, n):
        t = self.resolve_type(n.type)
        bt = T.strip_new(t)
        e = self.expr(n.expr, t)
        s = T.strip_new(e.type)
        if T.same_type(s, bt):
            return E(t, e.code, e.const)
        if isinstance(bt, T.Bits):
            if isinstance(s, T.InfIntT):
                if e.const is None:
                    raise self.err("cast of a non-constant 'int'", n)
                return self.lit(wrap(e.const, bt), t)
            if isinstance(s, T.BoolT):
                if bt.width != 1 or bt.signed:
                    raise self.err(f"cannot cast bool to {t} (only to bit<1>)", n)
                if e.const is not None:
                    return self.lit(int(e.const), t)
                return E(t, f"(1 if {e.code} else 0)")
            if isinstance(s, T.EnumT) and s.base is not None:
                s = s.base
            if isinstance(s, T.Bits):
                if e.const is not None:
                    return self.lit(wrap(e.const, bt), t)
                if bt.signed:
                    h = 1 << (bt.width - 1)
                    return E(t, f"((({e.code} & {bt.mask:#x}) ^ {h:#x}) - {h:#x})")
                if not s.signed and s.width <= bt.width:
                    return E(t, e.code)
                return E(t, f"({e.code} & {bt.mask:#x})")
        if isinstance(bt, T.BoolT):
            if isinstance(s, T.Bits) and s.width == 1 and not s.signed:
                if e.const is not None:
                    return self.lit(bool(e.const), T.BOOL)
                return E(t, f"({e.code} != 0)")
            if isinstance(s, T.InfIntT) and e.const in (0, 1):
                return self.lit(bool(e.const), T.BOOL)
        if isinstance(bt, T.EnumT) and bt.base is not None:
            if isinstance(s, T.InfIntT) and e.const is not None:
                return self.lit(wrap(e.const, bt.base), t)
            if isinstance(s, T.Bits):
                inner = self.x_Cast(A.Cast(bt.base, n.expr, loc=n.loc)) if s != bt.base else e
                return E(t, inner.code, inner.const)
        if isinstance(bt, T.InfIntT) and e.const is not None:
            return self.lit(e.const, T.INFINT)
        if isinstance(bt, T.HeaderT | T.StructT | T.TupleT) and isinstance(s, T.ListT | T.StructInitT):
            return self.coerce(e, t, n, "cast")
        raise self.err(f"cannot cast {e.type} to {t}", n)

    # ------------------------------------------------------------------ calls
    def bind_args(self, params: list, args: list[A.Arg], node, what: str) -> list:
        """Match arguments to parameters (positional or by name, defaults, @optional)."""
        named = [a for a in args if a.name is not None]
        if named and len(named) != len(args):
            raise self.err(f"{what}: mix of named and positional arguments", node)
        out: list = [None] * len(params)
        if named:
            pnames = [p.name for p in params]
            for a in args:
                if a.name not in pnames:
                    raise self.err(f"{what}: no parameter named '{a.name}'", a)
                out[pnames.index(a.name)] = a
        else:
            if len(args) > len(params):
                raise self.err(f"{what}: expected {len(params)} argument(s), got {len(args)}", node)
            for i, a in enumerate(args):
                out[i] = a
        for i, p in enumerate(params):
            if out[i] is None:
                if p.default is not None:
                    out[i] = A.Arg(p.default, loc=_loc(p.default))
                elif A.anno(p.annos, "optional") is not None:
                    out[i] = None
                else:
                    raise self.err(f"{what}: expected {len(params)} argument(s), got {len(args)}", node)
        return out

    def arg_for_param(self, p_type, direction: str, arg, node, what: str) -> E:
        if arg is None or arg.value is None:
            if direction in ("out",):
                return E(p_type, "None", extra="dontcare")
            raise self.err(f"{what}: don't-care argument for a non-out parameter", node)
        e = self.expr(arg.value, p_type)
        if direction in ("out", "inout"):
            if e.lv is None:
                raise self.err(f"{what}: argument for {direction} parameter must be an assignable l-value",
                               arg.value)
            if not T.same_type(T.strip_new(e.type), T.strip_new(p_type)) and not isinstance(p_type, T.TypeVar):
                raise self.err(f"{what}: argument of type {e.type} for {direction} parameter of type {p_type}",
                               arg.value)
            return e
        return self.coerce(e, p_type, arg.value, what)

    def x_Call(self, n):
        e = self.call(n)
        if isinstance(e.type, T.VoidT):
            raise self.err("a call that returns no value used as an expression", n)
        return e

    def call(self, n: A.Call) -> E:
        f = self.expr(n.func)
        ex = f.extra
        if isinstance(ex, tuple) and ex[0] == "method":
            _, base, name, mnode = ex
            return self.method_call(n, base, name)
        if isinstance(ex, Sym):
            if ex.kind == "action":
                return self.action_call(n, ex)
            if ex.kind == "extern_func":
                return self.extern_func_call(n, ex)
            if ex.kind == "function":
                return self.function_call(n, ex)
        raise self.err("this is not something that can be called", n.func)

    def lvals_assign(self, targets: list[tuple[E, str]]) -> list[str]:
        lines = []
        for e, val in targets:
            if e.extra == "dontcare":
                continue
            lines.extend(e.lv.assign(val))
        return lines

    def call_with_params(self, n, params, fcode: str, what: str, prefix_args: str = "",
                         ptypes=None) -> tuple[list[str], str]:
        """Compile a call to a generated function with P4 params; returns (lines, call-expression)."""
        bound = self.bind_args(params, n.args, n, what)
        codes = []
        outs = []
        for i, (p, a) in enumerate(zip(params, bound, strict=True)):
            pt = ptypes[i] if ptypes else self.resolve_type(p.type)
            e = self.arg_for_param(pt, p.direction, a, n, f"{what}, argument {i + 1} ({p.name})")
            scalar = T.strip_new(pt).is_scalar
            if p.direction == "out" and scalar:
                codes.append("0" if e.extra == "dontcare" else e.code)
                outs.append(e)
            elif p.direction == "inout" and scalar:
                codes.append(e.code)
                outs.append(e)
            elif p.direction == "out" and e.extra == "dontcare":
                codes.append(self.default_value(pt))
            else:
                codes.append(e.code if (p.direction in ("out", "inout") or scalar) else self.objval(e))
        allargs = ", ".join(([prefix_args] if prefix_args else []) + codes)
        call = f"{fcode}({allargs})"
        lines = []
        if outs:
            t = self.tmp()
            lines.append(f"{t} = {call}")
            lines.extend(self.lvals_assign([(e, f"{t}[{i}]") for i, e in enumerate(outs)]))
            return lines, t
        lines.append(call)
        return lines, call

    def action_call(self, n, sym: Sym) -> E:
        info = sym.info
        d = info.decl
        prefix = self.ctx.ctx_args if sym.const == "local" else ""
        lines, _ = self.call_with_params(n, d.params, info.pyfunc, f"call of action {info.local}", prefix)
        return E(T.VOID, "\n".join(lines))

    def function_call(self, n, sym: Sym) -> E:
        d = sym.decl
        ret = self.resolve_type(d.proto.ret)
        lines, call = self.call_with_params(n, d.proto.params, sym.py, f"call of function {d.name}")
        if isinstance(ret, T.VoidT):
            return E(T.VOID, "\n".join(lines))
        if len(lines) > 1:
            raise self.err("unsupported: calling a function with out/inout arguments inside an expression", n,
                           P4Unsupported)
        return E(ret, call)

    def field_values(self, e: E, node) -> list[tuple[str, int]]:
        """Flatten a field list (list expression, struct, header, tuple or scalar) to (code, width) pairs."""
        t = T.strip_new(e.type)
        if isinstance(t, T.ListT):
            out = []
            for it in e.extra:
                out.extend(self.field_values(it, node))
            return out
        if isinstance(t, T.StructInitT):
            out = []
            for it in e.extra.values():
                out.extend(self.field_values(it, node))
            return out
        if isinstance(t, T.HeaderT | T.StructT):
            out = []
            for f, ft in t.fields.items():
                out.extend(self.field_values(E(ft, f"{e.code}.{pyfield(f)}"), node))
            return out
        if isinstance(t, T.TupleT):
            out = []
            for i, ft in enumerate(t.items):
                out.extend(self.field_values(E(ft, f"{e.code}[{i}]"), node))
            return out
        if isinstance(t, T.Bits):
            return [(f"({e.code} & {t.mask:#x})" if t.signed else e.code, t.width)]
        if isinstance(t, T.BoolT):
            return [(f"(1 if {e.code} else 0)", 1)]
        if isinstance(t, T.EnumT) and t.base is not None:
            return [(e.code, t.base.width)]
        if isinstance(t, T.InfIntT):
            raise self.err("an 'int' constant in a field list needs a width (e.g. 8w5)", node)
        raise self.err(f"values of type {e.type} cannot be hashed or sent", node)

    def packed_bytes(self, e: E, node) -> str | None:
        """Code for the BMv2 byte layout of a field list (MSB-first concatenation, zero pad to a byte)."""
        fv = self.field_values(e, node)
        total = sum(w for _, w in fv)
        if total == 0:
            return "b''"
        parts = []
        shift = total
        for c, w in fv:
            shift -= w
            parts.append(f"({c} << {shift})" if shift else c)
        pad = -total % 8
        expr = " | ".join(parts)
        if pad:
            expr = f"(({expr}) << {pad})"
        return f"({expr}).to_bytes({(total + pad) // 8}, 'big')"

    def hash_fn(self, algo: str, node=None) -> str:
        if algo not in ("crc32", "crc32_custom", "crc16", "crc16_custom", "identity", "csum16", "xor16"):
            raise self.err(f"unsupported: hash algorithm {algo} here", node, P4Unsupported)
        self.hash_algos.add(algo)
        return f"_hb_{algo}"

    def fields_tuple(self, e: E, node) -> str:
        fv = self.field_values(e, node)
        return "(" + "".join(f"({c}, {w}), " for c, w in fv) + ")"

    def enum_member_name(self, e: E, enum_name: str, node) -> str:
        t = T.strip_new(e.type)
        if not (isinstance(t, T.EnumT) and t.name == enum_name) or e.const is None:
            raise self.err(f"expected a constant {enum_name} value", node)
        return t.members[e.const] if t.base is None else next(k for k, v in t.values.items() if v == e.const)

    def sm_code(self) -> str:
        return "PK.sm"

    def extern_func_call(self, n, sym: Sym) -> E:
        protos = sym.decl
        name = protos[0].name
        nargs = len(n.args)
        cands = [p for p in protos if len(p.params) == nargs] or \
            [p for p in protos if sum(1 for q in p.params if q.default is None and
                                      A.anno(q.annos, "optional") is None) <= nargs <= len(p.params)]
        if not cands:
            counts = sorted({len(p.params) for p in protos})
            raise self.err(f"{name}: expected {' or '.join(map(str, counts))} argument(s), got {nargs}", n)
        proto = cands[0]
        what = f"call of {name}"
        args = self.bind_args(proto.params, n.args, n, what)
        tparams = set(proto.type_params)
        if n.type_args and len(n.type_args) != len(proto.type_params):
            raise self.err(f"{name}: expected {len(proto.type_params)} type argument(s), got {len(n.type_args)}", n)
        targs = {tp: self.resolve_type(ta) for tp, ta in zip(proto.type_params, n.type_args, strict=False)}

        def arg(i, t=None):
            p = proto.params[i]
            pt = t
            if pt is None:
                if isinstance(p.type, A.NamedType) and p.type.name in targs:
                    pt = targs[p.type.name]
                elif isinstance(p.type, A.NamedType) and p.type.name in tparams:
                    pt = T.TypeVar(p.type.name)
                else:
                    pt = self.resolve_type(p.type)
            return self.arg_for_param(pt, p.direction, args[i], n, f"{what}, argument {i + 1} ({p.name})")

        if name == "mark_to_drop":
            sm = arg(0).code if proto.params else self.sm_code()
            return E(T.VOID, f"{sm}.egress_spec = 511\n{sm}.mcast_grp = 0")
        if name == "verify":
            if self.ctx.kind != "parser":
                raise self.err("verify() can only be called in a parser", n)
            c = arg(0)
            err = arg(1)
            return E(T.VOID, f"if not {c.code}: raise _ParserErr({err.code})")
        if name == "hash":
            res = arg(0)
            rt = T.strip_new(res.type)
            if not isinstance(rt, T.Bits):
                raise self.err(f"hash result must be bit<N>, not {res.type}", n.args[0])
            algo = self.enum_member_name(arg(1), "HashAlgorithm", n.args[1].value)
            base = arg(2)
            data = arg(3)
            mx = arg(4)
            for x, i in ((base, 2), (mx, 4)):
                if not isinstance(T.strip_new(x.type), T.Bits | T.InfIntT):
                    raise self.err(f"hash argument {i + 1} must be a number", n.args[i].value)
            if algo == "random":
                code = f"_rand({base.code}, {base.code} + {mx.code} - 1) if {mx.code} else {base.code}"
                self.rand_used = True
            else:
                hb = f"{self.hash_fn(algo, n)}({self.packed_bytes(data, n)})"
                if mx.const is not None:
                    code = f"((({hb} % {mx.const or 1}) + {base.code}) & {rt.mask:#x})"
                else:
                    code = f"((({hb} % ({mx.code} or 1)) + {base.code}) & {rt.mask:#x})"
            return E(T.VOID, "\n".join(res.lv.assign(code)))
        if name == "random":
            res = arg(0)
            rt = T.strip_new(res.type)
            if not isinstance(rt, T.Bits):
                raise self.err(f"random result must be bit<N>, not {res.type}", n.args[0])
            lo = self.coerce(arg(1, res.type), res.type, n, what)
            hi = self.coerce(arg(2, res.type), res.type, n, what)
            self.rand_used = True
            return E(T.VOID, "\n".join(res.lv.assign(f"_rand({lo.code}, {hi.code})")))
        if name == "digest":
            arg(0)
            data = arg(1)
            dt = T.strip_new(data.type)
            if isinstance(dt, T.StructT | T.HeaderT):
                dname = dt.name
                fields = [(f, T.bit_width(ft) or 0) for f, ft in dt.fields.items()]
            else:
                raise self.err("digest data must be a struct (P4Runtime needs its type name)", n.args[1])
            if dname not in self.info.digests:
                self.info.digests[dname] = ir.DigestInfo(dname, fields, dt)
            vals = "(" + "".join(c + ", " for c, _ in self.field_values(data, n)) + ")"
            return E(T.VOID, f"_digest({dname!r}, {vals})")
        if name in ("verify_checksum", "verify_checksum_with_payload", "update_checksum",
                    "update_checksum_with_payload"):
            c = self.coerce(arg(0), T.BOOL, n, what)
            data = arg(1)
            ck = arg(2)
            ckt = T.strip_new(ck.type)
            if not isinstance(ckt, T.Bits):
                raise self.err(f"checksum field must be bit<N>, not {ck.type}", n.args[2])
            algo = self.enum_member_name(arg(3), "HashAlgorithm", n.args[3].value)
            packed = self.packed_bytes(data, n)
            if name.endswith("with_payload"):
                packed = f"{packed} + PK.payload"
            hv = f"({self.hash_fn(algo, n)}({packed}) & {ckt.mask:#x})"
            if name.startswith("verify"):
                return E(T.VOID, f"if {c.code} and {hv} != {ck.code}: {self.sm_code()}.checksum_error = 1")
            lines = [f"if {c.code}:"] + ["    " + x for x in ck.lv.assign(hv)]
            return E(T.VOID, "\n".join(lines))
        if name == "clone":
            ct = self.enum_member_name(arg(0), "CloneType", n.args[0].value)
            s = arg(1)
            return E(T.VOID, f"PK.clone = ({0 if ct == 'I2E' else 1}, {s.code}, None)")
        if name in ("clone3", "clone_preserving_field_list"):
            ct = self.enum_member_name(arg(0), "CloneType", n.args[0].value)
            s = arg(1)
            fl = self.field_list_fn(arg(2), n, name == "clone_preserving_field_list")
            return E(T.VOID, f"PK.clone = ({0 if ct == 'I2E' else 1}, {s.code}, {fl})")
        if name in ("resubmit", "resubmit_preserving_field_list", "recirculate",
                    "recirculate_preserving_field_list"):
            fl = self.field_list_fn(arg(0), n, name.endswith("field_list")) if proto.params else "_NOFL"
            attr = "resubmit" if name.startswith("resubmit") else "recirc"
            return E(T.VOID, f"PK.{attr} = {fl}")
        if name == "truncate":
            ln = arg(0)
            return E(T.VOID, f"PK.truncate = {ln.code}")
        if name in ("assert", "assume"):
            c = self.coerce(arg(0), T.BOOL, n, what)
            return E(T.VOID, f"if not {c.code}: _assert_fail({str(n.loc)!r})")
        if name == "log_msg":
            msg = arg(0)
            if len(proto.params) > 1:
                data = arg(1)
                vals = "(" + "".join(c + ", " for c, _ in self.field_values(data, n)) + ")"
            else:
                vals = "()"
            return E(T.VOID, f"_log({msg.code}, {vals})")
        raise self.err(f"extern function '{name}' has no p4sim implementation", n, P4Unsupported)

    def field_list_fn(self, e: E, node, by_index: bool) -> str:
        """A function copying preserved metadata fields into a new packet instance."""
        if by_index:
            if e.const is None:
                raise self.err("field list index must be a compile-time constant", node)
            idx = e.const
            key = ("idx", idx)
        else:
            key = ("data", id(e))
        paths = []
        if by_index:
            mt = self.v1.get("M")
            if mt is not None:
                self._collect_field_list(mt, "m", idx, paths)
        else:
            self._data_paths(e, node, paths)
        name = f"_FL{len(self.field_lists)}"
        self.field_lists.append((name, key, paths))
        return name

    def _collect_field_list(self, t, path, idx, out):
        for f, ft in t.fields.items():
            a = A.anno(t.annos.get(f), "field_list")
            p = f"{path}.{pyfield(f)}"
            if a is not None and idx in a.args:
                out.append((p, T.strip_new(ft).is_scalar))
            elif isinstance(T.strip_new(ft), T.StructT):
                self._collect_field_list(T.strip_new(ft), p, idx, out)

    def _data_paths(self, e: E, node, out):
        t = T.strip_new(e.type)
        if isinstance(t, T.ListT):
            for it in e.extra:
                self._data_paths(it, node, out)
            return
        if isinstance(t, T.StructInitT):
            for it in e.extra.values():
                self._data_paths(it, node, out)
            return
        code = e.code
        roots = self.ctx.roots if hasattr(self.ctx, "roots") else {}
        for py, role in roots.items():
            if code == py or code.startswith(py + "."):
                out.append((role + code[len(py):], t.is_scalar))
                return
        raise self.err("preserved fields must be fields of the user metadata or standard_metadata "
                       "parameters", node)

    def method_call(self, n, base: E, name: str) -> E:
        bt = T.strip_new(base.type)
        nargs = len(n.args)

        def noargs():
            if nargs:
                raise self.err(f"{name}() takes no arguments", n)

        if isinstance(bt, T.HeaderT | T.UnionT):
            if name == "isValid":
                noargs()
                return E(T.BOOL, f"{base.code}._valid()" if isinstance(bt, T.UnionT) else f"{base.code}._v")
            if name in ("setValid", "setInvalid"):
                noargs()
                if base.lv is None:
                    raise self.err(f"cannot call {name}() on a read-only header", n)
                if isinstance(bt, T.UnionT):
                    raise self.err(f"{name}() is not defined on header unions", n)
                lines = [f"{base.code}._v = {name == 'setValid'}"]
                lines[:0] = self.union_siblings_invalidate(n.func.expr) if name == "setValid" else []
                return E(T.VOID, "\n".join(lines))
            if name in ("minSizeInBits", "maxSizeInBits", "minSizeInBytes", "maxSizeInBytes"):
                noargs()
                w = T.bit_width(bt) or 0
                return self.lit(w if "Bits" in name else w // 8, T.INFINT)
        if isinstance(bt, T.StructT) and name in ("minSizeInBits", "minSizeInBytes"):
            w = T.bit_width(bt) or 0
            return self.lit(w if "Bits" in name else w // 8, T.INFINT)
        if isinstance(bt, T.StackT):
            if name in ("push_front", "pop_front"):
                if nargs != 1:
                    raise self.err(f"{name} takes 1 argument", n)
                k = self.const_int(n.args[0].value, f"{name} count")
                if base.lv is None:
                    raise self.err(f"cannot call {name}() on a read-only stack", n)
                return E(T.VOID, f"{base.code}.{name}({k})")
        if isinstance(bt, T.TableT):
            noargs()
            info = bt.info
            return E(T.ApplyResultT(info), f"{info.pyfunc}({self.ctx.ctx_args})")
        if isinstance(bt, T.BlockT) and isinstance(bt.decl, A.ParserDecl):
            if name != "apply":
                raise self.err(f"{bt.name} has no method '{name}'", n)
            if self.ctx.kind != "parser":
                raise self.err("a sub-parser can only be applied in a parser state", n)
            d = bt.decl
            params = d.params
            if not params or not isinstance(T.strip_new(self.resolve_type(params[0].type)), T.ExternT):
                raise self.err(f"sub-parser {d.name} must take packet_in first", n)
            if len(n.args) != len(params):
                raise self.err(f"apply of {d.name}: expected {len(params)} argument(s), got {len(n.args)}", n)
            rest = A.Call(n.func, n.args[1:], loc=n.loc)
            lines, call = self.call_with_params(rest, params[1:], base.extra.py, f"apply of {d.name}",
                                                "data, off")
            if len(lines) != 1:
                raise self.err("unsupported: scalar out/inout parameters of a sub-parser", n, P4Unsupported)
            return E(T.VOID, f"off = {call}")
        if isinstance(bt, T.BlockT):
            if name != "apply":
                raise self.err(f"{bt.name} has no method '{name}'", n)
            d = bt.decl
            sym = base.extra
            lines, _ = self.call_with_params(n, d.params, sym.py, f"apply of {bt.name}")
            return E(T.VOID, "\n".join(lines))
        if isinstance(bt, T.ExternT):
            return self.extern_method(n, base, bt, name)
        raise self.err(f"{base.type} has no method '{name}'", n)

    def union_siblings_invalidate(self, hdr_node) -> list[str]:
        if isinstance(hdr_node, A.Member):
            parent = self.expr(hdr_node.expr)
            pt = T.strip_new(parent.type)
            if isinstance(pt, T.UnionT):
                return [f"{parent.code}.{pyfield(f)}._v = False" for f in pt.fields if f != hdr_node.name]
        return []

    def extern_method(self, n, base: E, et: T.ExternT, name: str) -> E:
        ename = et.name

        args = n.args
        what = f"{ename}.{name}"

        def expect(k):
            if len(args) != k:
                raise self.err(f"{what}: expected {k} argument(s), got {len(args)}", n)

        def val(i, t=None):
            if args[i].value is None:
                raise self.err(f"{what}: argument {i + 1} cannot be '_'", n)
            e = self.expr(args[i].value, t)
            return self.coerce(e, t, args[i].value, what) if t is not None else e

        def index(i):
            e = val(i)
            it = T.strip_new(e.type)
            if isinstance(it, T.InfIntT):
                return self.coerce(e, T.Bits(32), args[i].value, what)
            if not isinstance(it, T.Bits):
                raise self.err(f"{what}: index must be bit<N>, not {e.type}", args[i].value)
            return e

        def outarg(i):
            if args[i].value is None:
                return None
            e = self.expr(args[i].value)
            if e.lv is None:
                raise self.err(f"{what}: argument {i + 1} must be an assignable l-value", args[i].value)
            return e

        if ename == "packet_in":
            return self.packet_in_method(n, base, name)
        if ename == "packet_out":
            if name != "emit":
                raise self.err(f"packet_out has no method '{name}'", n)
            expect(1)
            return E(T.VOID, "\n".join(self.emit_code(val(0), base.code)))
        if ename == "counter" and name == "count":
            expect(1)
            i = index(0)
            return E(T.VOID, f"{base.code}.count({i.code}, PK.pkt_len)")
        if ename == "direct_counter" and name == "count":
            expect(0)
            return E(T.VOID, "pass")
        if ename == "meter" and name == "execute_meter":
            expect(2)
            i = index(0)
            r = outarg(1)
            code = f"{base.code}.execute({i.code}, PK.pkt_len, PK.now)"
            return E(T.VOID, "\n".join(r.lv.assign(code)) if r is not None else "pass")
        if ename == "direct_meter" and name == "read":
            expect(1)
            r = outarg(0)
            code = f"{base.code}.execute(PK.dm_entry, PK.pkt_len, PK.now)"
            return E(T.VOID, "\n".join(r.lv.assign(code)) if r is not None else "pass")
        if ename == "register":
            cell = et.args[0] if et.args else T.Bits(32)
            if name == "read":
                if len(args) == 1:
                    i = index(0)
                    return E(cell, f"{base.code}.dp_read({i.code})")
                expect(2)
                r = outarg(0)
                i = index(1)
                if r is not None and not T.same_type(T.strip_new(r.type), T.strip_new(cell)):
                    raise self.err(f"{what}: result of type {r.type} for a register of {cell}", args[0].value)
                code = f"{base.code}.dp_read({i.code})"
                return E(T.VOID, "\n".join(r.lv.assign(code)) if r is not None else "pass")
            if name == "write":
                expect(2)
                i = index(0)
                v = val(1, cell)
                return E(T.VOID, f"{base.code}.dp_write({i.code}, {v.code})")
        raise self.err(f"{ename} has no method '{name}' in p4sim", n)

    # ------------------------------------------------------------------ packet_in / packet_out
    def packet_in_method(self, n, base, name) -> E:
        if self.ctx.kind != "parser":
            raise self.err("packet_in methods can only be used in a parser", n)
        args = n.args
        if name == "extract":
            if len(args) == 2:
                raise self.err("unsupported: variable-size extract (varbit)", n, P4Unsupported)
            if len(args) != 1:
                raise self.err("extract takes 1 argument", n)
            target = self.expr(args[0].value)
            return E(T.VOID, "\n".join(self.extract_code(target, args[0].value)))
        if name == "lookahead":
            if len(n.type_args) != 1:
                raise self.err("lookahead needs one type argument, e.g. lookahead<bit<16>>()", n)
            t = self.resolve_type(n.type_args[0])
            bt = T.strip_new(t)
            w = T.bit_width(bt)
            if w is None:
                raise self.err(f"cannot lookahead a value of type {t}", n)
            raw = f"_lookahead(data, off, {w})"
            if isinstance(bt, T.Bits):
                if bt.signed:
                    h = 1 << (w - 1)
                    return E(t, f"(({raw} ^ {h:#x}) - {h:#x})")
                return E(t, raw)
            if isinstance(bt, T.HeaderT):
                return E(t, f"{self.pyclass(bt)}._unpack({raw})")
            raise self.err(f"unsupported: lookahead of {t}", n, P4Unsupported)
        if name == "advance":
            if len(args) != 1:
                raise self.err("advance takes 1 argument", n)
            e = self.coerce(self.expr(args[0].value), T.Bits(32), args[0].value, "advance")
            return E(T.VOID, f"off = _advance(n, off, {e.code})")
        if name == "length":
            return E(T.Bits(32), "n")
        raise self.err(f"packet_in has no method '{name}'", n)

    def header_unpack_lines(self, t: T.HeaderT, target: str, v: str) -> list[str]:
        lines = []
        shift = t.width
        for f, ft in t.fields.items():
            w = T.bit_width(ft)
            shift -= w
            m = (1 << w) - 1
            if shift == 0:
                x = f"{v} & {m:#x}" if t.width != w else v
            elif shift + w == t.width:
                x = f"{v} >> {shift}"
            else:
                x = f"({v} >> {shift}) & {m:#x}"
            bft = T.strip_new(ft)
            if isinstance(bft, T.Bits) and bft.signed:
                h = 1 << (w - 1)
                x = f"(({x}) ^ {h:#x}) - {h:#x}"
            elif isinstance(bft, T.BoolT):
                x = f"({x}) != 0"
            lines.append(f"{target}.{pyfield(f)} = {x}")
        return lines

    def header_pack_expr(self, t: T.HeaderT, src: str) -> str:
        parts = []
        shift = t.width
        for f, ft in t.fields.items():
            w = T.bit_width(ft)
            shift -= w
            bft = T.strip_new(ft)
            x = f"{src}.{pyfield(f)}"
            if isinstance(bft, T.Bits) and bft.signed:
                x = f"({x} & {bft.mask:#x})"
            parts.append(f"({x} << {shift})" if shift else x)
        return " | ".join(parts) or "0"

    def extract_code(self, target: E, node) -> list[str]:
        t = T.strip_new(target.type)
        if not isinstance(t, T.HeaderT):
            raise self.err(f"extract needs a header, not {target.type}", node)
        if target.lv is None:
            raise self.err("extract target must be an assignable header", node)
        nbytes = t.width // 8
        lines = []
        code = target.code
        if isinstance(target.extra, tuple) and target.extra[0] == "stack_next":
            stk = target.extra[1].code
            lines.append(f"if {stk}.nxt >= {stk}.size: raise _ParserErr({V1_ERRORS.index('StackOutOfBounds')})")
            lines.append(f"_h = {stk}.h[{stk}.nxt]")
            lines.append(f"{stk}.nxt += 1")
            code = "_h"
        elif isinstance(target.extra, tuple) and target.extra[0] == "stack_last":
            raise self.err("cannot extract into .last", node)
        lines.extend(self.union_siblings_invalidate(node))
        lines.append(f"if off + {nbytes} > n: raise _ParserErr({V1_ERRORS.index('PacketTooShort')})")
        if nbytes:
            lines.append(f"_x = int.from_bytes(data[off:off + {nbytes}], 'big')")
            lines.extend(self.header_unpack_lines(t, code, "_x"))
        lines.append(f"{code}._v = True")
        lines.append(f"off += {nbytes}")
        return lines

    def emit_code(self, e: E, out: str) -> list[str]:
        t = T.strip_new(e.type)
        if isinstance(t, T.HeaderT):
            nbytes = t.width // 8
            if e.lv is None and e.extra != "ref" and not e.code.replace(".", "").replace("_", "").isalnum():
                tmp = self.tmp()
                return [f"{tmp} = {e.code}", f"if {tmp}._v: {out}.append(({self.header_pack_expr(t, tmp)})"
                        f".to_bytes({nbytes}, 'big'))"]
            return [f"if {e.code}._v: {out}.append(({self.header_pack_expr(t, e.code)}).to_bytes({nbytes}, 'big'))"]
        if isinstance(t, T.StructT | T.UnionT):
            lines = []
            for f, ft in t.fields.items():
                lines.extend(self.emit_code(E(ft, f"{e.code}.{pyfield(f)}", extra="ref"), out))
            return lines
        if isinstance(t, T.StackT):
            lines = []
            for i in range(t.size):
                lines.extend(self.emit_code(E(t.elem, f"{e.code}.h[{i}]", extra="ref"), out))
            return lines
        raise self.err(f"emit needs a header, header stack, header union or struct of those, not {e.type}", e.loc)

    # ------------------------------------------------------------------ statements
    def new_local(self, name: str) -> str:
        base = "v_" + pyident(name)
        py = base
        i = 1
        while py in self.ctx.pyused:
            i += 1
            py = f"{base}_{i}"
        self.ctx.pyused.add(py)
        return py

    def stmts(self, stmts, em: Emitter):
        for s in stmts:
            self.stmt(s, em)

    def emit_lines(self, code: str, em: Emitter):
        for line in code.split("\n"):
            em(line)

    def stmt(self, s, em: Emitter):
        if isinstance(s, A.Assign):
            lhs = self.expr(s.lhs)
            if lhs.lv is None:
                raise self.err(f"cannot assign to '{expr_text(s.lhs)}' (not an l-value or read-only)", s.lhs)
            rhs = self.coerce(self.expr(s.rhs, lhs.type), lhs.type, s.rhs, "assignment")
            if T.strip_new(lhs.type).is_scalar or isinstance(T.strip_new(lhs.type), T.TupleT):
                for line in lhs.lv.assign(rhs.code):
                    em(line)
            else:
                em(f"{lhs.code}._set({rhs.code})")
            return
        if isinstance(s, A.CallStmt):
            e = self.call(s.call)
            if isinstance(e.type, T.VoidT):
                self.emit_lines(e.code or "pass", em)
            else:
                em(e.code)
            return
        if isinstance(s, A.If):
            kw = "if"
            while True:               # else-if chains become elif (no deep nesting in the generated code)
                c = self.coerce(self.expr(s.cond), T.BOOL, s.cond, "if condition")
                em(f"{kw} {c.code}:")
                self.sub_block(s.then, em)
                if isinstance(s.other, A.If):
                    s = s.other
                    kw = "elif"
                    continue
                if s.other is not None:
                    em("else:")
                    self.sub_block(s.other, em)
                return
        if isinstance(s, A.Block):
            self.push()
            self.stmts(s.stmts, em)
            self.pop()
            if not s.stmts:
                em("pass")
            return
        if isinstance(s, A.Switch):
            self.switch_stmt(s, em)
            return
        if isinstance(s, A.Exit):
            if self.ctx.kind in ("parser", "function"):
                raise self.err(f"exit is not allowed in a {self.ctx.kind}", s)
            em("raise _EXIT")
            return
        if isinstance(s, A.Return):
            if self.ctx.kind == "parser":
                raise self.err("return is not allowed in a parser", s)
            if self.ctx.kind == "function":
                rt = self.ctx.ret_type
                if s.value is None:
                    if not isinstance(rt, T.VoidT):
                        raise self.err(f"function must return a value of type {rt}", s)
                    em(self.ret_code(None))
                else:
                    if isinstance(rt, T.VoidT):
                        raise self.err("a void function cannot return a value", s)
                    v = self.coerce(self.expr(s.value, rt), rt, s.value, "return value")
                    em(self.ret_code(self.objval(v)))
                return
            if s.value is not None:
                raise self.err(f"return with a value in a {self.ctx.kind}", s)
            em(self.ret_code(None))
            return
        if isinstance(s, A.VarDecl):
            t = self.resolve_type(s.type)
            py = self.new_local(s.name)
            if s.init is not None:
                v = self.coerce(self.expr(s.init, t), t, s.init, f"initializer of {s.name}")
                em(f"{py} = {self.objval(v)}")
            else:
                em(f"{py} = {self.default_value(t)}")
            self.declare(s.name, Sym("var", t, py), s)
            return
        if isinstance(s, A.ConstDecl):
            self.const_decl(s)
            return
        if isinstance(s, A.Empty):
            em("pass")
            return
        if isinstance(s, A.Instantiation):
            raise self.err("instantiations are not allowed inside blocks", s, P4Unsupported)
        raise self.err(f"unsupported statement {type(s).__name__}", s, P4Unsupported)

    def ret_code(self, value):
        outs = self.ctx.out_params
        if value is not None:
            if outs:
                return f"return ({value}, " + "".join(o + ", " for o in outs) + ")"
            return f"return {value}"
        if outs:
            return "return (" + "".join(o + ", " for o in outs) + ")"
        return "return"

    def sub_block(self, s, em: Emitter):
        em.indent()
        self.push()
        n0 = len(em.lines)
        if isinstance(s, A.Block):
            self.stmts(s.stmts, em)
        else:
            self.stmt(s, em)
        if len(em.lines) == n0:
            em("pass")
        self.pop()
        em.dedent()

    def switch_stmt(self, s: A.Switch, em: Emitter):
        e = self.expr(s.expr)
        t = e.type
        tv = self.tmp()
        em(f"{tv} = {e.code}")
        groups: list[tuple[list, Any]] = []
        pending: list = []
        seen = set()
        has_default = False
        for c in s.cases:
            if c.label is None:
                if has_default:
                    raise self.err("duplicate default label", c)
                has_default = True
                pending.append(None)
            else:
                if isinstance(t, T.ActionRunT):
                    if not isinstance(c.label, A.Name):
                        raise self.err("switch on action_run needs action names as labels", c.label)
                    names = {a.action.local: a.action for a in t.table.actions}
                    if c.label.name not in names:
                        raise self.err(f"'{c.label.name}' is not an action of table {t.table.local}", c.label)
                    key = names[c.label.name].name
                    pending.append(repr(key))
                else:
                    lv = self.coerce(self.expr(c.label, t), t, c.label, "switch label")
                    if lv.const is None:
                        raise self.err("switch label must be a compile-time constant", c.label)
                    key = lv.const
                    pending.append(lv.code)
                if key in seen:
                    raise self.err("duplicate switch label", c.label)
                seen.add(key)
            if c.body is not None:
                groups.append((pending, c.body))
                pending = []
        if pending:
            groups.append((pending, None))
        first = True
        default_body = None
        for labels, body in groups:
            if None in labels:
                default_body = (labels, body)
                continue
            cond = " or ".join(f"{tv} == {x}" for x in labels)
            em(f"{'if' if first else 'elif'} {cond}:")
            first = False
            if body is None:
                em.indent()
                em("pass")
                em.dedent()
            else:
                self.sub_block(body, em)
        if default_body is not None and default_body[1] is not None:
            if first:
                em("if True:")
            else:
                em("else:")
            self.sub_block(default_body[1], em)

    # ------------------------------------------------------------------ function emission
    _PATH = re.compile(r"\b(?:p|a)_\w+(?:\.\w+)+")

    def emit_function(self, em: Emitter) -> None:
        """Add a generated function to the module, binding header/struct objects used more than once to locals
        (header and struct objects are never replaced during a packet, only assigned in place)."""
        lines = em.lines
        m = re.match(r"\s*def \w+\((.*)\):", lines[0]) if lines else None
        if m is None or len(lines) < 2:
            self.out.extend(em)
            return
        params = {x.strip() for x in m.group(1).split(",") if x.strip()}
        body = "\n".join(lines[1:])
        counts: dict[str, int] = {}
        for path in self._PATH.findall(body):
            parts = path.split(".")
            for k in range(2, len(parts) + 1):
                pre = ".".join(parts[:k])
                if pre in self.obj_paths and parts[0] in params:
                    counts[pre] = counts.get(pre, 0) + 1
        hoist = [p for p, c in counts.items() if c >= 2]
        if not hoist:
            self.out.extend(em)
            return
        hoist.sort(key=lambda p: (p.count("."), p))
        indent = re.match(r"\s*", lines[1]).group(0)
        pre_lines = []
        aliases = {}
        for i, path in enumerate(hoist):
            alias = f"_o{i}"
            src = path
            for prev in sorted(aliases, key=len, reverse=True):   # build on shorter aliases
                if src.startswith(prev + "."):
                    src = aliases[prev] + src[len(prev):]
                    break
            pre_lines.append(f"{indent}{alias} = {src}")
            aliases[path] = alias
        for path in sorted(aliases, key=len, reverse=True):
            body = re.sub(re.escape(path) + r"(?![\w\[])", aliases[path], body)
        # the alias definitions themselves must keep the original paths
        self.out.lines.append(lines[0])
        self.out.lines.extend(pre_lines)
        self.out.lines.extend(body.split("\n"))

    # ------------------------------------------------------------------ names
    @staticmethod
    def fq(prefix: str, name: str, annos) -> str:
        n = _anno_arg(annos, "name")
        if isinstance(n, str) and n:
            if n.startswith("."):
                return n[1:]
            name = n
        return f"{prefix}.{name}" if prefix else name

    # ------------------------------------------------------------------ actions
    def action_decl(self, d: A.ActionDecl, prefix: str):
        fqn = self.fq(prefix, d.name, d.annos)
        pyf = self.unique("A_" + fqn)
        seen_dirless = False
        cp = []
        for p in d.params:
            if p.direction == "":
                seen_dirless = True
                t = self.resolve_type(p.type)
                w = T.bit_width(t)
                if w is None or not T.strip_new(t).is_scalar:
                    raise self.err(f"action parameter '{p.name}' has type {t}; control-plane parameters must be "
                                   "bit<N>, int<N>, bool or a serializable enum", p)
                cp.append(ir.ParamInfo(p.name, w, p.annos))
            elif seen_dirless:
                raise self.err(f"directional parameter '{p.name}' after a directionless one (directional "
                               "parameters come first)", p)
        info = ir.ActionInfo(fqn, d.name, cp, d.annos, pyf, len(d.params) - len(cp), decl=d)
        sym = Sym("action", py=pyf, info=info, const="local" if prefix else "global")
        self.declare(d.name, sym, d)
        saved = self.ctx
        ctx = Ctx("action", prefix, saved.ctx_args if prefix else "", saved.frame, control=saved.control,
                  roots=saved.roots)
        self.ctx = ctx
        self.push()
        pnames = []
        for p in d.params:
            t = self.resolve_type(p.type)
            py = "a_" + pyident(p.name)
            if py in ctx.pyused:
                raise self.err(f"duplicate parameter '{p.name}'", p)
            ctx.pyused.add(py)
            pnames.append(py)
            self.declare(p.name, Sym("param", t, py, direction=p.direction or "in"), p)
            if p.direction in ("out", "inout") and T.strip_new(t).is_scalar:
                ctx.out_params.append(py)
        em = Emitter()
        args = ([ctx.ctx_args] if ctx.ctx_args else []) + pnames
        em(f"def {pyf}({', '.join(args)}):")
        em.indent()
        n0 = len(em.lines)
        self.stmts(d.body.stmts, em)
        if ctx.out_params:
            em(self.ret_code(None))
        if len(em.lines) == n0:
            em("pass")
        em.dedent()
        self.pop()
        self.ctx = saved
        self.emit_function(em)
        return info

    # ------------------------------------------------------------------ tables
    def table_decl(self, d: A.TableDecl, prefix: str):
        fqn = self.fq(prefix, d.name, d.annos)
        props = {}
        for p in d.props:
            if p.name in props:
                raise self.err(f"table property '{p.name}' given twice", p)
            props[p.name] = p
        if "actions" not in props:
            raise self.err(f"table {d.name} has no 'actions' property", d)
        info = ir.TableInfo(fqn, d.name, [], [], annos=d.annos, hidden=A.anno(d.annos, "hidden") is not None)
        key_codes = []
        if "key" in props:
            lpm = 0
            for k in props["key"].value:
                e = self.expr(k.expr)
                kt = T.strip_new(e.type)
                if k.match_kind not in self.match_kinds:
                    raise self.err(f"unknown match kind '{k.match_kind}'", name_loc(k.match_kind, k.loc))
                if k.match_kind not in ("exact", "lpm", "ternary", "range", "optional", "selector"):
                    raise self.err(f"unsupported: match kind '{k.match_kind}'", k, P4Unsupported)
                if k.match_kind == "lpm":
                    lpm += 1
                    if lpm > 1:
                        raise self.err(f"table {d.name} has more than one lpm key field", k)
                if isinstance(kt, T.BoolT):
                    code, w = f"(1 if {e.code} else 0)", 1
                elif isinstance(kt, T.Bits):
                    code = f"({e.code} & {kt.mask:#x})" if kt.signed else e.code
                    w = kt.width
                elif isinstance(kt, T.EnumT) and kt.base is not None:
                    code, w = e.code, kt.base.width
                elif isinstance(kt, T.ErrorT):
                    code, w = e.code, 32
                else:
                    raise self.err(f"table key of type {e.type} is not supported", k)
                kname = _anno_arg(k.annos, "name") or expr_text(k.expr)
                info.keys.append(ir.KeyInfo(kname, k.match_kind, w, k.annos))
                key_codes.append(code)
        # actions
        refs: dict[str, tuple] = {}
        for ref in props["actions"].value:
            s = self.lookup(ref.name, ref)
            if s.kind != "action":
                raise self.err(f"'{ref.name}' in the actions of table {d.name} is not an action", ref)
            if s.info.name in refs:
                raise self.err(f"action '{ref.name}' listed twice in table {d.name}", ref)
            scope = "TABLE_AND_DEFAULT"
            if A.anno(ref.annos, "tableonly"):
                scope = "TABLE_ONLY"
            elif A.anno(ref.annos, "defaultonly"):
                scope = "DEFAULT_ONLY"
            info.actions.append(ir.ActionRefInfo(s.info, scope, ref.annos))
            refs[ref.name] = (s, ref)
            refs[s.info.name] = (s, ref)
        by_local = {r.action.local: r.action for r in info.actions}
        # other properties
        for pname, p in props.items():
            if pname in ("key", "actions", "entries"):
                continue
            v = p.value
            if pname == "default_action":
                aname, args = self._action_ref_expr(v)
                if aname not in refs:
                    raise self.err(f"default action '{aname}' is not in the actions list of table {d.name}", v)
                s = refs[aname][0]
                info.default_action = s.info.name
                info.default_args = self._const_action_args(s.info, args, v)
                info.default_const = p.const
                if any(r.action is s.info and r.scope == "TABLE_ONLY" for r in info.actions):
                    raise self.err(f"action '{aname}' is @tableonly and cannot be the default action", v)
            elif pname == "size":
                info.size = self.const_int(v, "table size")
            elif pname == "counters":
                inst = self._instance_ref(v, "direct_counter", d, fqn)
                info.direct_counter = inst.name
            elif pname == "meters":
                inst = self._instance_ref(v, "direct_meter", d, fqn)
                info.direct_meter = inst.name
            elif pname == "implementation":
                inst = self._instance_ref(v, ("action_profile", "action_selector"), d, fqn)
                info.implementation = inst.name
            elif pname == "support_timeout":
                e = self.expr(v)
                info.idle_timeout = bool(e.const)
            elif pname == "largest_priority_wins":
                pass
            elif pname == "priority_delta":
                pass
        if any(k.match_kind == "selector" for k in info.keys):
            impl = self.info.externs.get(info.implementation or "")
            if impl is None or impl.kind != "action_selector":
                raise self.err(f"table {d.name} has a selector key but no action_selector implementation", d)
        if "entries" in props:
            info.const_entries = props["entries"].const
            self._table_entries(info, props["entries"], refs, d, props)
        if info.default_action is None:
            if "NoAction" in refs or any(r.action.name == "NoAction" for r in info.actions):
                info.default_action = "NoAction"
            else:
                na = self.globals.get("NoAction")
                info.default_action = "NoAction"
                if na is not None and na.kind == "action" and "NoAction" not in self.info.actions:
                    pass
        info.pyobj = self.unique("TBL_" + fqn)
        info.pyfunc = self.unique("TA_" + fqn)
        self.bind.append((info.pyobj, "table", fqn))
        # dispatchers
        disp = {}
        ctxa = self.ctx.ctx_args
        for r in info.actions:
            s, ref = refs[r.action.local] if r.action.local in refs else refs[r.action.name]
            a = r.action
            if ref.args or a.n_dir_params:
                if len(ref.args or []) != a.n_dir_params:
                    raise self.err(f"action '{a.local}' in table {d.name} must bind its {a.n_dir_params} "
                                   "directional parameter(s)", ref)
                disp[a.name] = self._bound_dispatcher(a, ref, s, ctxa)
            elif s.const == "local" or not ctxa:
                disp[a.name] = a.pyfunc
            else:
                ad = self.unique("D_" + a.name)
                self.out(f"def {ad}({ctxa}, *cp):")
                self.out(f"    {a.pyfunc}(*cp)")
                disp[a.name] = ad
            self.info.actions.setdefault(a.name, a)
        if info.default_action == "NoAction" and "NoAction" not in disp:
            na = self.globals.get("NoAction")
            if na is None or na.kind != "action":
                raise self.err(f"table {d.name} has no default action and NoAction is not declared", d)
            ad = self.unique("D_NoAction")
            self.out(f"def {ad}({ctxa + ', ' if ctxa else ''}*cp):")
            self.out("    pass")
            disp["NoAction"] = ad
            self.info.actions.setdefault("NoAction", na.info)
        dname = self.unique("DISP_" + fqn)
        self.out(f"{dname} = {{" + ", ".join(f"{k!r}: {v}" for k, v in disp.items()) + "}")
        em = Emitter()
        em(f"def {info.pyfunc}({ctxa}):")
        em.indent()
        keyt = "(" + "".join(c + ", " for c in key_codes) + ")"
        em(f"r = {info.pyobj}.lookup({keyt}, PK.pkt_len)")
        if info.direct_meter:
            em("PK.dm_entry = r.entry")
        em("a = r.action")
        em("if a is not None:")
        em(f"    {dname}[a.action]({ctxa + ', ' if ctxa else ''}*a.args)")
        em("return r")
        em.dedent()
        self.emit_function(em)
        self.info.tables[fqn] = info
        sym = Sym("table", T.TableT(info), info.pyfunc, info=info)
        self.declare(d.name, sym, d)
        _ = by_local
        return info

    def _bound_dispatcher(self, a: ir.ActionInfo, ref, sym: Sym, ctxa: str) -> str:
        """A function running action `a` with the directional arguments bound in the table's action list."""
        d = a.decl
        cps = [p for p in d.params if p.direction == ""]
        self.push()
        cp_args = []
        names = []
        for i, p in enumerate(cps):
            py = f"c{i}"
            names.append(py)
            self.declare(f"__cp{i}", Sym("param", self.resolve_type(p.type), py, direction="in"), ref)
            cp_args.append(A.Arg(A.Name(f"__cp{i}", loc=ref.loc), loc=ref.loc))
        call = A.Call(A.Name(ref.name, loc=ref.loc), list(ref.args or []) + cp_args, loc=ref.loc)
        prefix = ctxa if sym.const == "local" else ""
        lines, _ = self.call_with_params(call, d.params, a.pyfunc, f"action {a.local} in a table", prefix)
        self.pop()
        fn = self.unique("D_" + a.name)
        self.out(f"def {fn}({', '.join(([ctxa] if ctxa else []) + names)}):")
        for line in lines:
            self.out("    " + line)
        return fn

    def _action_ref_expr(self, v):
        if isinstance(v, A.Call) and isinstance(v.func, A.Name):
            return v.func.name, v.args
        if isinstance(v, A.Name):
            return v.name, []
        raise self.err("expected an action call, e.g. drop() or set_port(1)", v)

    def _const_action_args(self, ainfo: ir.ActionInfo, args, node) -> tuple:
        d = ainfo.decl
        cps = [p for p in d.params if p.direction == ""]
        if ainfo.n_dir_params and len(args) == len(d.params):
            args = args[ainfo.n_dir_params:]
        if len(args) != len(cps):
            raise self.err(f"action '{ainfo.local}' expects {len(cps)} argument(s), got {len(args)}", node)
        bound = self.bind_args(cps, args, node, f"action {ainfo.local}")
        out = []
        for p, a in zip(cps, bound, strict=True):
            t = self.resolve_type(p.type)
            e = self.coerce(self.expr(a.value, t), t, a.value, f"argument '{p.name}' of {ainfo.local}")
            if e.const is None:
                raise self.err(f"argument '{p.name}' of {ainfo.local} must be a compile-time constant", a.value)
            v = e.const
            bt = T.strip_new(t)
            if isinstance(v, bool):
                v = int(v)
            if isinstance(bt, T.Bits) and bt.signed:
                v &= bt.mask
            out.append(v)
        return tuple(out)

    def _instance_ref(self, v, kinds, d, table_fqn):
        if isinstance(kinds, str):
            kinds = (kinds,)
        if isinstance(v, A.Name):
            s = self.lookup(v.name, v)
            if s.kind != "instance" or not isinstance(s.info, ir.ExternInstance) or s.info.kind not in kinds:
                raise self.err(f"'{v.name}' is not a {' or '.join(kinds)}", v)
            inst = s.info
        elif isinstance(v, A.CtorCall):
            t = self.resolve_type(v.type)
            if not isinstance(t, T.ExternT) or t.name not in kinds:
                raise self.err(f"expected a {' or '.join(kinds)}", v)
            inst = self.extern_instance(t, v.args, table_fqn + "_" + t.name, v, [])
            py = self.unique("X_" + inst.name)
            inst.pyobj = py
            self.bind.append((py, inst.kind, inst.name))
        else:
            raise self.err(f"expected a {' or '.join(kinds)}", v)
        if table_fqn not in inst.tables:
            if inst.kind in ("direct_counter", "direct_meter") and inst.tables:
                raise self.err(f"{inst.kind} '{inst.name}' is already used by table {inst.tables[0]}", v)
            inst.tables.append(table_fqn)
        return inst

    def _keyset_items(self, ks, n):
        if isinstance(ks, A.KsTuple):
            items = ks.items
        elif isinstance(ks, A.KsDefault | A.KsDontCare) and n != 1:
            items = [A.KsDontCare(loc=ks.loc)] * n
        else:
            items = [ks]
        if len(items) != n:
            raise self.err(f"entry has {len(items)} key value(s), the table has {n} key field(s)", ks)
        return items

    def _table_entries(self, info: ir.TableInfo, prop, refs, d, props):
        keys = [k for k in info.keys if k.match_kind != "selector"]
        needs_prio = any(k.match_kind in ("ternary", "range", "optional") for k in keys)
        entries = prop.value
        explicit = [e for e in entries if e.priority is not None or A.anno(e.annos, "priority")]
        lpw = True
        if "largest_priority_wins" in props:
            lpw = bool(self.expr(props["largest_priority_wins"].value).const)
        n = len(entries)
        for i, ent in enumerate(entries):
            items = self._keyset_items(ent.keyset, len(keys))
            match = []
            for k, it in zip(keys, items, strict=True):
                match.append(self._entry_match(k, it))
            aname = ent.action.name
            if aname not in refs:
                raise self.err(f"action '{aname}' is not in the actions list of table {d.name}", ent.action)
            s = refs[aname][0]
            args = self._const_action_args(s.info, ent.action.args or [], ent.action)
            prio = 0
            if needs_prio or explicit:
                if ent.priority is not None:
                    prio = self.const_int(ent.priority, "entry priority")
                elif A.anno(ent.annos, "priority") is not None:
                    prio = int(_anno_arg(ent.annos, "priority"))
                elif explicit:
                    raise self.err("when some entries have priorities, all must have one", ent)
                else:
                    prio = n - i
                if explicit and not lpw:
                    prio = (1 << 24) - prio
            info.entries.append(ir.ConstEntry(tuple(match), prio, s.info.name, args))

    def _entry_match(self, k: ir.KeyInfo, it):
        t = T.Bits(k.width)
        if isinstance(it, A.KsDontCare | A.KsDefault):
            if k.match_kind == "exact":
                raise self.err("don't-care '_' is not allowed for an exact key field", it)
            return None
        if isinstance(it, A.KsMask):
            v = self.coerce(self.expr(it.value, t), t, it.value, "entry key").const
            m = self.coerce(self.expr(it.mask, t), t, it.mask, "entry mask").const
            if v is None or m is None:
                raise self.err("entry key values must be compile-time constants", it)
            if k.match_kind == "ternary":
                return ("ternary", v & m, m)
            if k.match_kind == "lpm":
                plen = bin(m).count("1")
                if m != ((1 << plen) - 1) << (k.width - plen):
                    raise self.err("lpm mask must be a prefix mask", it)
                return ("lpm", v & m, plen)
            raise self.err(f"mask '&&&' not allowed for a {k.match_kind} key field", it)
        if isinstance(it, A.KsRange):
            if k.match_kind != "range":
                raise self.err(f"range '..' not allowed for a {k.match_kind} key field", it)
            lo = self.coerce(self.expr(it.lo, t), t, it.lo, "entry key").const
            hi = self.coerce(self.expr(it.hi, t), t, it.hi, "entry key").const
            return ("range", lo, hi)
        e = self.expr(it, t)
        if isinstance(T.strip_new(e.type), T.BoolT):
            e = self.lit(int(e.const), t) if e.const is not None else e
        else:
            e = self.coerce(e, T.Bits(k.width) if not isinstance(T.strip_new(e.type), T.EnumT | T.ErrorT)
                            else e.type, it, "entry key")
        if e.const is None:
            raise self.err("entry key values must be compile-time constants", it)
        v = int(e.const) & ((1 << k.width) - 1)
        mk = k.match_kind
        if mk == "exact":
            return ("exact", v)
        if mk == "lpm":
            return ("lpm", v, k.width)
        if mk == "ternary":
            return ("ternary", v, (1 << k.width) - 1)
        if mk == "range":
            return ("range", v, v)
        if mk == "optional":
            return ("optional", v)
        raise self.err(f"unsupported match kind {mk} in entries", it)

    # ------------------------------------------------------------------ instantiations
    def _ctor_const(self, arg, what, node):
        if arg is None or arg.value is None:
            raise self.err(f"{what}: missing argument", node)
        e = self.expr(arg.value)
        if e.const is None:
            raise self.err(f"{what} must be a compile-time constant", arg.value)
        return e

    def extern_instance(self, t: T.ExternT, args, fqn, node, annos) -> ir.ExternInstance:
        name = t.name
        decl = t.decl
        nargs = len(args)
        ctor = next((c for c in decl.ctors if len(c) == nargs), None)
        if ctor is None:
            counts = sorted({len(c) for c in decl.ctors})
            raise self.err(f"{name}: expected {' or '.join(map(str, counts)) or 0} constructor argument(s), got "
                           f"{nargs}", node)

        def enum_arg(i, enum):
            return self.enum_member_name(self._ctor_const(args[i], f"{name} argument {i + 1}", node), enum,
                                         args[i].value)

        def int_arg(i):
            e = self._ctor_const(args[i], f"{name} argument {i + 1}", node)
            if not isinstance(e.const, int) or isinstance(e.const, bool):
                raise self.err(f"{name} argument {i + 1} must be an integer", args[i].value)
            return e.const

        def idx_width():
            if t.args:
                w = T.bit_width(t.args[0])
                return w or 32
            return 32

        if name == "counter":
            inst = ir.ExternInstance("counter", fqn, int_arg(0), enum_arg(1, "CounterType"), index_width=idx_width())
        elif name == "direct_counter":
            inst = ir.ExternInstance("direct_counter", fqn, 0, enum_arg(0, "CounterType"))
        elif name == "meter":
            inst = ir.ExternInstance("meter", fqn, int_arg(0), enum_arg(1, "MeterType"), index_width=idx_width())
        elif name == "direct_meter":
            inst = ir.ExternInstance("direct_meter", fqn, 0, enum_arg(0, "MeterType"))
        elif name == "register":
            if not t.args:
                raise self.err("register needs its cell type, e.g. register<bit<32>>(1024)", node)
            w = T.bit_width(t.args[0])
            if w is None:
                raise self.err(f"register cells of type {t.args[0]} are not supported", node)
            iw = T.bit_width(t.args[1]) if len(t.args) > 1 else 32
            inst = ir.ExternInstance("register", fqn, int_arg(0) if nargs else 1, width=w, index_width=iw or 32)
        elif name == "action_profile":
            inst = ir.ExternInstance("action_profile", fqn, int_arg(0))
        elif name == "action_selector":
            algo = enum_arg(0, "HashAlgorithm")
            inst = ir.ExternInstance("action_selector", fqn, int_arg(1), algo=algo, output_width=int_arg(2))
        elif name in ("packet_in", "packet_out"):
            raise self.err(f"{name} cannot be instantiated", node)
        else:
            raise self.err(f"extern '{name}' has no p4sim implementation", node, P4Unsupported)
        inst.annos = annos
        inst.type_name = name
        if fqn in self.info.externs:
            raise self.err(f"duplicate instance name '{fqn}'", node)
        self.info.externs[fqn] = inst
        return inst

    def instantiation(self, d: A.Instantiation, prefix: str):
        t = self.resolve_type(d.type)
        fqn = self.fq(prefix, d.name, d.annos)
        if isinstance(t, T.ExternT):
            inst = self.extern_instance(t, d.args, fqn, d, d.annos)
            py = self.unique("X_" + fqn)
            inst.pyobj = py
            self.bind.append((py, inst.kind, fqn))
            self.declare(d.name, Sym("instance", t, py, info=inst), d)
            return
        if isinstance(t, T.BlockT) and t.kind == "control":
            consts = self.ctor_consts(t.decl, d.args, d)
            saved_scopes = self.scopes
            self.scopes = []
            func = self.compile_control(t.decl, fqn, consts=consts)
            self.scopes = saved_scopes
            self.declare(d.name, Sym("instance", t, func, decl=t.decl), d)
            return
        if isinstance(t, T.BlockT) and t.kind == "parser":
            if self.ctx is None or self.ctx.kind != "parser":
                raise self.err("a parser can only be instantiated inside a parser", d)
            consts = self.ctor_consts(t.decl, d.args, d)
            saved_scopes, saved_ctx = self.scopes, self.ctx
            func = self.compile_parser(t.decl, fqn, consts, sub=True)
            self.scopes, self.ctx = saved_scopes, saved_ctx
            self.declare(d.name, Sym("instance", t, func, decl=t.decl), d)
            return
        raise self.err(f"cannot instantiate {t}", d)

    # ------------------------------------------------------------------ controls
    def ctor_consts(self, decl, args, node) -> list[tuple[str, Sym]]:
        """Compile-time values of a parser's/control's constructor parameters."""
        params = decl.ctor_params or []
        if not params and args:
            raise self.err(f"{decl.name} takes no constructor arguments", node)
        bound = self.bind_args(params, args, node, f"instantiation of {decl.name}")
        out = []
        for p, a in zip(params, bound, strict=True):
            t = self.resolve_type(p.type)
            if a is None or a.value is None:
                raise self.err(f"missing constructor argument '{p.name}'", node)
            e = self.coerce(self.expr(a.value, t), t, a.value, f"constructor argument '{p.name}'")
            if e.const is None:
                raise self.err(f"constructor argument '{p.name}' must be a compile-time constant", a.value)
            out.append((p.name, Sym("const", t, e.code, e.const, decl=p)))
        return out

    def compile_control(self, d: A.ControlDecl, prefix: str, roots: dict | None = None,
                        consts: list | None = None) -> str:
        saved_ctx = self.ctx
        self.scopes = [{}]
        for cname, csym in consts or ():
            self.scopes[0][cname] = csym
        fname = self.unique("C_" + prefix)
        ptypes = [self.resolve_type(p.type) for p in d.params]
        scalar_params = [p for p, t in zip(d.params, ptypes, strict=True) if T.strip_new(t).is_scalar]
        needs_frame = bool(scalar_params) or any(isinstance(x, A.VarDecl) for x in d.locals)
        obj_py = []
        ctx = Ctx("control", prefix, "", needs_frame, control=d, roots={})
        self.ctx = ctx
        fargs = []
        init = Emitter()
        frame_slots = []
        outs = []
        for p, t in zip(d.params, ptypes, strict=True):
            py = "p_" + pyident(p.name)
            fargs.append(py)
            bt = T.strip_new(t)
            if bt.is_scalar:
                frame_slots.append(py)
                self.declare(p.name, Sym("param", t, f"L.{py}", direction=p.direction or "in"), p)
                init(f"L.{py} = {py}")
                if p.direction in ("out", "inout"):
                    outs.append(f"L.{py}")
            else:
                obj_py.append(py)
                if isinstance(bt, T.ExternT) and bt.name == "packet_out":
                    self.declare(p.name, Sym("instance", t, py, direction="in"), p)
                else:
                    self.declare(p.name, Sym("param", t, py, direction=p.direction or "in"), p)
        if roots:
            for i, role in roots.items():
                ctx.roots["p_" + pyident(d.params[i].name)] = role
        ctx.ctx_args = ", ".join(obj_py + (["L"] if needs_frame else []))
        frame_cls = None
        if needs_frame:
            frame_cls = self.unique("F_" + prefix)
        for loc in d.locals:
            if isinstance(loc, A.VarDecl):
                t = self.resolve_type(loc.type)
                py = "v_" + pyident(loc.name)
                frame_slots.append(py)
                if loc.init is not None:
                    v = self.coerce(self.expr(loc.init, t), t, loc.init, f"initializer of {loc.name}")
                    init(f"L.{py} = {self.objval(v)}")
                else:
                    init(f"L.{py} = {self.default_value(t)}")
                self.declare(loc.name, Sym("var", t, f"L.{py}"), loc)
            elif isinstance(loc, A.ConstDecl):
                self.const_decl(loc)
            elif isinstance(loc, A.ActionDecl):
                self.action_decl(loc, prefix)
            elif isinstance(loc, A.TableDecl):
                self.table_decl(loc, prefix)
            elif isinstance(loc, A.Instantiation):
                self.instantiation(loc, prefix)
            elif isinstance(loc, A.FunctionDecl):
                raise self.err("unsupported: functions declared inside a control", loc, P4Unsupported)
            else:
                raise self.err(f"unsupported control-local declaration {type(loc).__name__}", loc, P4Unsupported)
        if frame_cls:
            self.out(f"class {frame_cls}:")
            self.out(f"    __slots__ = {tuple(frame_slots)!r}")
        em = Emitter()
        em(f"def {fname}({', '.join(fargs)}):")
        em.indent()
        if frame_cls:
            em(f"L = {frame_cls}()")
        em.extend(init)
        ctx.kind = "control"
        ctx.out_params = outs
        ctx.pyused = set(fargs) | {"L"}
        self.push()
        n0 = len(em.lines)
        self.stmts(d.body.stmts, em)
        if outs:
            em(self.ret_code(None))
        elif len(em.lines) == n0:
            em("pass")
        self.pop()
        em.dedent()
        self.emit_function(em)
        self.ctx = saved_ctx
        return fname

    # ------------------------------------------------------------------ parsers
    def compile_parser(self, d: A.ParserDecl, prefix: str, consts: list | None = None, sub: bool = False) -> str:
        """The top-level parser returns (offset, error code); a sub-parser takes and returns the offset and
        raises the parser error (reject: code -1) to its caller."""
        saved_ctx = self.ctx
        self.scopes = [{}]
        for cname, csym in consts or ():
            self.scopes[0][cname] = csym
        fname = self.unique("P_" + prefix)
        ctx = Ctx("parser", prefix, "", False, control=d)
        ctx.sub_parser = sub
        self.ctx = ctx
        fargs = ["data", "off"] if sub else ["data"]
        ctx.pyused = {"data", "off", "n", "st", "_x", "_h"}
        for p in d.params:
            t = self.resolve_type(p.type)
            bt = T.strip_new(t)
            if isinstance(bt, T.ExternT) and bt.name == "packet_in":
                self.declare(p.name, Sym("instance", t, "data", direction="in"), p)
                continue
            py = "p_" + pyident(p.name)
            fargs.append(py)
            ctx.pyused.add(py)
            self.declare(p.name, Sym("param", t, py, direction=p.direction or "in"), p)
        em = Emitter()
        em(f"def {fname}({', '.join(fargs)}):")
        em.indent()
        em("n = len(data)")
        if not sub:
            em("off = 0")
        for loc in d.locals:
            if isinstance(loc, A.VarDecl):
                self.stmt(loc, em)
            elif isinstance(loc, A.ConstDecl):
                self.const_decl(loc)
            elif isinstance(loc, A.ValueSetDecl):
                self.value_set_decl(loc, prefix)
            elif isinstance(loc, A.Instantiation):
                self.instantiation(loc, prefix)
            else:
                raise self.err(f"unsupported parser-local declaration {type(loc).__name__}", loc, P4Unsupported)
        states = {}
        for i, s in enumerate(d.states):
            if s.name in ("accept", "reject"):
                raise self.err(f"state '{s.name}' cannot be declared", s)
            if s.name in states:
                raise self.err(f"duplicate state '{s.name}'", s)
            states[s.name] = i
        if "start" not in states:
            raise self.err(f"parser {d.name} has no 'start' state", d)
        order = [states["start"]] + [i for i in range(len(d.states)) if i != states["start"]]
        em(f"st = {states['start']}")
        em("try:")
        em.indent()
        em("while True:")
        em.indent()
        for i in order:
            s = d.states[i]
            em(f"if st == {i}:  # state {s.name}")
            em.indent()
            self.push()
            self.stmts(s.stmts, em)
            self.transition(s, states, em)
            self.pop()
            em.dedent()
        em(self._goto("accept", states, d))
        em.dedent()
        em.dedent()
        em("except _ParserErr as e:")
        if sub:
            em("    if e.off is None: e.off = off")
            em("    raise")
        else:
            em("    return (off if e.off is None else e.off), e.code")
        em.dedent()
        self.emit_function(em)
        self.ctx = saved_ctx
        return fname

    def value_set_decl(self, d: A.ValueSetDecl, prefix: str):
        t = self.resolve_type(d.type)
        bt = T.strip_new(t)
        size = self.const_int(d.size, "value_set size")
        fields = []
        if isinstance(bt, T.Bits):
            fields.append(("", bt.width, "exact"))
        elif isinstance(bt, T.StructT):
            for f, ft in bt.fields.items():
                w = T.bit_width(ft)
                if w is None:
                    raise self.err(f"value_set field '{f}' must be bit<N>", d)
                mk = _anno_arg(bt.annos.get(f), "match") or "exact"
                if mk not in ("exact", "ternary", "lpm", "range", "optional"):
                    raise self.err(f"unsupported match kind '{mk}' in a value_set", d)
                fields.append((f, w, mk))
        else:
            raise self.err(f"value_set elements must be bit<N> or a struct, not {t}", d)
        fqn = self.fq(prefix, d.name, d.annos)
        py = self.unique("VS_" + fqn)
        self.info.value_sets[fqn] = ir.ValueSetInfo(fqn, size, fields)
        self.info.value_sets[fqn].annos = d.annos
        self.bind.append((py, "value_set", fqn))
        self.declare(d.name, Sym("value_set", t, py, info=self.info.value_sets[fqn]), d)

    def _goto(self, name, states, node) -> str:
        sub = getattr(self.ctx, "sub_parser", False)
        if name == "accept":
            return "return off" if sub else "return off, 0"
        if name == "reject":
            return "raise _ParserErr(-1)" if sub else "return off, -1"
        if name not in states:
            raise self.err(f"unknown parser state '{name}'", name_loc(name, _loc(node)))
        return f"st = {states[name]}; continue"

    def transition(self, s: A.ParserState, states, em: Emitter):
        tr = s.transition
        if tr is None:
            em(self._goto("reject", states, s))
            return
        if isinstance(tr, str):
            em(self._goto(tr, states, s))
            return
        keys = [self.expr(x) for x in tr.exprs]
        kvars = []
        for k in keys:
            if isinstance(T.strip_new(k.type), T.InfIntT):
                raise self.err("select key needs a width", tr)
            v = self.tmp()
            em(f"{v} = {k.code}")
            kvars.append(v)
        for c in tr.cases:
            if isinstance(c.keyset, A.Name):
                vs = self.lookup_opt(c.keyset.name)
                if vs is not None and vs.kind == "value_set":
                    n = len(vs.info.fields)
                    if n != len(kvars):
                        raise self.err(f"value_set {c.keyset.name} has {n} field(s), the select has {len(kvars)} "
                                       "key(s)", c.keyset)
                    em(f"if {vs.py}.matches(({''.join(k + ', ' for k in kvars)})): "
                       f"{self._goto(c.state, states, c)}")
                    continue
            items = self._keyset_items(c.keyset, len(keys))
            conds = []
            for k, kv, it in zip(keys, kvars, items, strict=True):
                conds.append(self._select_cond(k, kv, it))
            conds = [x for x in conds if x != "True"]
            em(f"if {' and '.join(conds) or 'True'}: {self._goto(c.state, states, c)}")
        em(f"raise _ParserErr({V1_ERRORS.index('NoMatch')})")

    def _select_cond(self, k: E, kv: str, it) -> str:
        t = k.type
        if isinstance(it, A.KsDefault | A.KsDontCare):
            return "True"
        if isinstance(it, A.KsMask):
            v = self.coerce(self.expr(it.value, t), t, it.value, "select case")
            m = self.coerce(self.expr(it.mask, t), t, it.mask, "select mask")
            if v.const is not None and m.const is not None:
                return f"({kv} & {m.const:#x}) == {v.const & m.const:#x}"
            return f"({kv} & {m.code}) == ({v.code} & {m.code})"
        if isinstance(it, A.KsRange):
            lo = self.coerce(self.expr(it.lo, t), t, it.lo, "select range")
            hi = self.coerce(self.expr(it.hi, t), t, it.hi, "select range")
            return f"{lo.code} <= {kv} <= {hi.code}"
        v = self.coerce(self.expr(it, t), t, it, "select case")
        return f"{kv} == {v.code}"

    # ------------------------------------------------------------------ functions
    def function_decl(self, d: A.FunctionDecl):
        proto = d.proto
        if proto.type_params:
            raise self.err("unsupported: generic functions", d, P4Unsupported)
        py = self.unique("FN_" + d.name)
        self.declare(d.name, Sym("function", py=py, decl=d), d)
        saved_ctx, saved_scopes = self.ctx, self.scopes
        self.scopes = [{}]
        ctx = Ctx("function", "", "", False)
        ctx.ret_type = self.resolve_type(proto.ret)
        self.ctx = ctx
        names = []
        for p in proto.params:
            t = self.resolve_type(p.type)
            pn = "a_" + pyident(p.name)
            names.append(pn)
            ctx.pyused.add(pn)
            self.declare(p.name, Sym("param", t, pn, direction=p.direction or "in"), p)
            if p.direction in ("out", "inout") and T.strip_new(t).is_scalar:
                ctx.out_params.append(pn)
        em = Emitter()
        em(f"def {py}({', '.join(names)}):")
        em.indent()
        self.push()
        self.stmts(d.body.stmts, em)
        self.pop()
        em(self.ret_code(None) if isinstance(ctx.ret_type, T.VoidT) or True else "")
        em.dedent()
        self.out.extend(em)
        self.ctx, self.scopes = saved_ctx, saved_scopes

    # ------------------------------------------------------------------ v1model main
    def compile_main(self, main: A.Instantiation):
        pt = self.resolve_type(main.type)
        pkg = pt.decl
        if pkg.name != "V1Switch":
            raise self.err(f"unsupported: package {pkg.name} (p4sim implements the v1model V1Switch package)",
                           main, P4Unsupported)
        if len(main.args) != len(pkg.params):
            raise self.err(f"V1Switch expects {len(pkg.params)} arguments, got {len(main.args)}", main)
        blocks = []
        kinds = ["parser", "control", "control", "control", "control", "control"]
        roles = ["parser", "verify", "ingress", "egress", "compute", "deparser"]
        for i, a in enumerate(main.args):
            v = a.value
            ctor_args = []
            if isinstance(v, A.CtorCall):
                t = self.resolve_type(v.type)
                ctor_args = v.args
            elif isinstance(v, A.Name):
                s = self.lookup(v.name, v)
                t = s.type
            else:
                raise self.err("V1Switch arguments must be parser/control instances", v)
            if not isinstance(t, T.BlockT) or t.kind != kinds[i] or not isinstance(t.decl, A.ParserDecl |
                                                                                      A.ControlDecl):
                raise self.err(f"argument {i + 1} of V1Switch ({roles[i]}) must be a {kinds[i]}, not {t}", v)
            if isinstance(v, A.Name) and isinstance(s.decl, A.Instantiation):
                ctor_args = s.decl.args
            blocks.append((t.decl, v, self.ctor_consts(t.decl, ctor_args, v)))
        consts_of = {id(b[0]): b[2] for b in blocks}
        blocks = [(b[0], b[1]) for b in blocks]
        pdecl = blocks[0][0]
        if len(pdecl.params) != 4:
            raise self.err("the v1model parser must have 4 parameters (packet_in, out H, inout M, inout "
                           "standard_metadata_t)", pdecl)
        H = self.resolve_type(pdecl.params[1].type)
        M = self.resolve_type(pdecl.params[2].type)
        SM = self.types.get("standard_metadata_t")
        self.v1 = {"H": H, "M": M, "SM": SM}
        expect = {
            "parser": [("", "packet_in"), ("out", H), ("inout", M), ("inout", SM)],
            "verify": [("inout", H), ("inout", M)],
            "ingress": [("inout", H), ("inout", M), ("inout", SM)],
            "egress": [("inout", H), ("inout", M), ("inout", SM)],
            "compute": [("inout", H), ("inout", M)],
            "deparser": [("", "packet_out"), ("in", H)],
        }
        for (decl, _node), role in zip(blocks, roles, strict=True):
            exp = expect[role]
            if len(decl.params) != len(exp):
                raise self.err(f"{role} block {decl.name} must have {len(exp)} parameters, has "
                               f"{len(decl.params)}", decl)
            for p, (dirn, et) in zip(decl.params, exp, strict=True):
                t = self.resolve_type(p.type)
                if isinstance(et, str):
                    if not (isinstance(t, T.ExternT) and t.name == et):
                        raise self.err(f"parameter '{p.name}' of {decl.name} must be {et}", p)
                    continue
                if not T.same_type(T.strip_new(t), T.strip_new(et)):
                    raise self.err(f"parameter '{p.name}' of {decl.name} has type {t}, but the parser's "
                                   f"{'headers' if et is H else 'metadata' if et is M else 'standard metadata'}"
                                   f" type is {et}", p)
                if (p.direction or "") != dirn and not (role == "deparser" and p.direction in ("in", "inout", "")):
                    raise self.err(f"parameter '{p.name}' of {decl.name} must be '{dirn}'", p)
        if not isinstance(T.strip_new(H), T.StructT):
            raise self.err(f"the headers type must be a struct, not {H}", pdecl.params[1])
        if not isinstance(T.strip_new(M), T.StructT):
            raise self.err(f"the metadata type must be a struct, not {M}", pdecl.params[2])
        entry = {}
        for (decl, _node), role in zip(blocks, roles, strict=True):
            prefix = self.fq("", decl.name, decl.annos)
            if role == "parser":
                entry[role] = self.compile_parser(decl, prefix, consts_of[id(decl)])
            else:
                roots = {1: "m", 2: "sm"} if role in ("ingress", "egress") else None
                entry[role] = self.compile_control(decl, prefix, roots, consts_of[id(decl)])
        self.entry = entry

    # ------------------------------------------------------------------ module assembly
    def module_source(self) -> str:
        for k in ("H", "M", "SM"):
            self.pyclass(self.v1[k])
        src = Emitter()
        src("# generated by p4sim from P4 source; do not edit")
        src("_EXIT = _Exit()")
        src("def _NOFL(m_src, sm_src, m_dst, sm_dst):")
        src("    pass")
        src.lines.extend(self.class_code.lines)
        # _mk / _unpack helpers for every class
        src.lines.extend(self.out.lines)
        for name, _key, paths in self.field_lists:
            src(f"def {name}(m_src, sm_src, m_dst, sm_dst):")
            if not paths:
                src("    pass")
            for path, scalar in paths:
                if "." not in path:       # the whole metadata struct
                    src(f"    {path}_dst._set({path}_src)")
                    continue
                role, rest = path.split(".", 1)
                if scalar:
                    src(f"    {role}_dst.{rest} = {role}_src.{rest}")
                else:
                    src(f"    {role}_dst.{rest}._set({role}_src.{rest})")
        e = self.entry
        src(f"PARSER = {e['parser']}")
        src(f"VERIFY = {e['verify']}")
        src(f"INGRESS = {e['ingress']}")
        src(f"EGRESS = {e['egress']}")
        src(f"COMPUTE = {e['compute']}")
        src(f"DEPARSER = {e['deparser']}")
        src(f"NEW_H = {self.pyclass(self.v1['H'])}")
        src(f"NEW_M = {self.pyclass(self.v1['M'])}")
        src(f"NEW_SM = {self.pyclass(self.v1['SM'])}")
        return src.text()
