"""Type resolution (type references to checked types, generic specialisation), constant integers, and
top-level/type/enum/const declarations: the checking every other part of the compiler builds on. The state it
fills is CompileState (state.py); the Python classes of the types come from pytypes.py."""
from __future__ import annotations

import re

from p4exec.compiler import controlplane, frontend_rules, tir
from p4exec.compiler import types as T
from p4exec.compiler.compile_state import CompileState
from p4exec.compiler.direct_calls import instantiate_direct_calls
from p4exec.compiler.parts import BlockPart, ExpressionPart, InstancePart, RulesPart, TablePart
from p4exec.compiler.symbols import Ctx, Sym, _anno_arg, expr_text, wrap
from p4exec.errors import P4Unsupported, SourceLoc
from p4exec.frontend import ast as A
from p4exec.frontend.parser import name_loc

# Type references that name one fixed type (exact classes: none of them has subclasses).
_SIMPLE_TYPES: dict[type, T.Type] = {
    A.BoolType: T.BOOL, A.ErrorTypeRef: T.ERROR, A.StringTypeRef: T.STRING, A.VoidType: T.VOID,
    A.IntInfType: T.INFINT, A.MatchKindTypeRef: T.MATCH_KIND, A.DontCareType: T.DONTCARE,
}


def _flat_struct(t: T.StructT) -> bool:
    """A struct allowed as a header field (P4_16 1.2.2): only bit<N>/int<N>/bool/serializable-enum fields, nested
    structs of those included."""
    for ft in t.fields.values():
        b = T.strip_new(ft)
        if isinstance(b, T.StructT):
            if not _flat_struct(b):
                return False
        elif not (isinstance(b, T.Bits | T.BoolT) or (isinstance(b, T.EnumT) and b.base)):
            return False
    return True


class DeclarationCompiler:
    """Type resolution, Python classes of P4 data types, and top-level/type/enum/const declarations."""

    block: BlockPart
    checks: RulesPart
    exprs: ExpressionPart
    instances: InstancePart
    tables: TablePart

    def __init__(self, st: CompileState) -> None:
        self.st = st

    # ------------------------------------------------------------------ types
    def resolve_type(self, tref) -> T.Type:
        if isinstance(tref, T.Type):
            return tref
        if isinstance(tref, A.BitType):
            w = self.const_int(tref.width, "bit width")
            if w <= 0 or (tref.signed and w < 1):
                raise self.st.err(f"bit width must be positive, not {w}", tref)
            return T.Bits(w, tref.signed)
        simple = _SIMPLE_TYPES.get(type(tref))
        if simple is not None:
            return simple
        if isinstance(tref, A.VarbitType):
            return T.Varbit(self.const_int(tref.width, "varbit width"))
        if isinstance(tref, A.TupleType):
            return T.TupleT(tuple(self.resolve_type(x) for x in tref.args))
        if isinstance(tref, A.StackType):
            elem = self.resolve_type(tref.elem)
            if not isinstance(elem, T.HeaderT | T.UnionT):
                raise self.st.err(f"header stack elements must be headers, not {elem}", tref)
            n = self.const_int(tref.size, "header stack size")
            if n <= 0:
                raise self.st.err("header stack size must be positive", tref)
            return T.StackT(elem, n)
        if isinstance(tref, A.NamedType):
            for tv in reversed(self.st.tvars):
                if tref.name in tv:
                    return tv[tref.name]
            t = self.st.types.get(tref.name)
            if t is None:
                raise self.st.err(f"unknown type '{tref.name}'", tref)
            if tref.name in self.st.info.translations:     # checked in p4info.py if this use is live (as p4c)
                self.st.info.translated_uses.append((tref.name, self.st.action_in_scope()))
            if isinstance(t, tuple):
                kind, decl = t
                if kind == "generic":
                    return self.specialize(decl, tref)
                if kind == "extern":
                    args = tuple(self.resolve_type(a) for a in tref.args)
                    if tref.args and len(tref.args) > len(decl.type_params):
                        hint = ""
                        if decl.name in ("counter", "meter", "register") and self.instances.v1model_version() is not None:
                            hint = (f" (V1MODEL_VERSION {self.instances.v1model_version()}; the index type argument of "
                                    f"counter<I>, meter<I>, register<T, I> needs V1MODEL_VERSION >= 20200408)")
                        raise self.st.err(f"extern {decl.name} takes {len(decl.type_params)} type argument(s), "
                                       f"got {len(tref.args)}{hint}", tref)
                    return T.ExternT(decl.name, decl, args)
                return T.BlockT(kind, decl.name, decl)
            if tref.args:
                raise self.st.err(f"type '{tref.name}' takes no type arguments", tref)
            return t
        raise self.st.err(f"unsupported type {type(tref).__name__}", tref, P4Unsupported)

    def const_int(self, expr, what="value") -> int:
        e = self.exprs.expr(expr)
        if e.const is None or isinstance(e.const, bool) or not isinstance(e.const, int):
            raise self.st.err(f"{what} must be a compile-time integer constant", expr)
        return e.const

    # ------------------------------------------------------------------ python classes for data types

    # ------------------------------------------------------------------ top-level declarations
    def run(self):
        frontend_rules.check_action_control_plane_names(self.st.program, self.st.err)
        main = None
        for d in self.st.program.decls:
            if isinstance(d, A.Instantiation) and not self._is_extern_type(d.type):
                t = self.resolve_type(d.type)
                if isinstance(t, T.BlockT) and t.kind == "package":
                    # the package named `main` is the program, as in p4c; another package instance before it
                    # is unused (p4c warns), and two named `main` are a duplicate that declare() reports
                    if main is None or (d.name == "main" and main.name != "main"):
                        main = d
                    self.st.declare(d.name, Sym("block", t, decl=d), d)
                    continue
                if isinstance(t, T.BlockT):
                    self.st.declare(d.name, Sym("block", t, decl=d), d)
                    continue
            self.top_decl(d)
        if main is None:
            raise self.st.err("no 'main' package instantiation (expected e.g. V1Switch(...) main;)",
                           SourceLoc(self.st.filename, 1, 1))
        self.block.compile_main(main)
        self.checks.check_direct_meter_reads()
        self.checks.check_pipeline_control_flow()
        for d, width in self.st.odd_headers:
            # a back-end rule of p4c-bm2-ss: reported after every frontend error, so those come first
            raise self.st.err(f"header {d.name}: Found header with fields totaling {width} bits.  BMv2 target only "
                              "supports headers with fields totaling a multiple of 8 bits (p4exec too)",
                              name_loc(d.name, d.loc))

    def check_v1model_version(self, d) -> None:
        """v1model.p4 turns `#define V1MODEL_VERSION N` into `__v1model_version`. p4c's frontend
        (getV1ModelVersion.h, since p4lang/p4c#5296) refuses a number outside the versions its v1model.p4
        knows, 20180101 to 20200408; 1.2.4.17 still accepted any number. An unknown version would silently
        select declarations the program was not written for, so p4exec follows the newer rule."""
        v = d.value
        known = " and ".join(map(str, self.V1MODEL_VERSIONS))
        where = self._define_location("V1MODEL_VERSION") or d
        if isinstance(v, A.IntLit):
            lo, hi = self.V1MODEL_VERSIONS[0], self.V1MODEL_VERSIONS[-1]
            if not lo <= v.value <= hi:
                raise self.st.err(f"{v.value}: unknown v1model version; initial supported version is {lo}, "
                                  f"latest is {hi}", where)
            return
        raise self.st.err(f"malformed V1MODEL_VERSION: expected a number ({known}), got "
                       f"'{expr_text(v)}'", where)

    def _define_location(self, macro: str) -> SourceLoc | None:
        """Where the program's own file defines ``macro`` (the value's column), so the error points there
        rather than into v1model.p4 which expands it."""
        try:
            with open(self.st.filename, encoding="utf-8", errors="replace") as f:
                lines = f.read().split("\n")
        except OSError:
            return None
        pat = re.compile(rf"^\s*#\s*define\s+{re.escape(macro)}\s+(\S)")
        for i, line in enumerate(lines):
            m = pat.match(line)
            if m:
                return SourceLoc(self.st.filename, i + 1, m.start(1) + 1)
        return None

    def _is_block_type(self, name: str) -> bool:
        t = self.st.types.get(name)
        return isinstance(t, tuple) and t[0] in ("parser", "control") and isinstance(t[1], A.ParserDecl | A.ControlDecl)

    def _is_extern_type(self, tref) -> bool:
        return isinstance(tref, A.NamedType) and isinstance(self.st.types.get(tref.name), tuple) \
            and self.st.types[tref.name][0] == "extern"

    def declare_type(self, name, t, node):
        if name in self.st.types:
            raise self.st.err(f"duplicate declaration of type '{name}'", node)
        self.st.types[name] = t

    def top_decl(self, d):
        if isinstance(d, A.ErrorDecl):
            for m in d.members:
                if m in self.st.info.errors:
                    raise self.st.err(f"duplicate error member '{m}'", d)
                self.st.info.errors.append(m)
            return
        if isinstance(d, A.MatchKindDecl):
            for m in d.members:
                if m in self.st.match_kinds:
                    raise self.st.err(f"duplicate match_kind '{m}'", d)
                self.st.match_kinds.append(m)
                self.st.declare(m, Sym("const", T.MATCH_KIND, repr(m), m), d)
            return
        if isinstance(d, A.HeaderDecl | A.StructDecl | A.HeaderUnionDecl):
            self.type_decl(d)
            return
        if isinstance(d, A.EnumDecl):
            self.enum_decl(d)
            return
        if isinstance(d, A.TypedefDecl):
            t = self.resolve_type(d.type)
            # p4c reads @p4runtime_translation only where the type is used by live code (p4info.py)
            translation = A.anno(d.annos, "p4runtime_translation")
            if translation is not None:
                self.st.info.translations[d.name] = translation
            self.declare_type(d.name, T.NewT(d.name, t, translation) if d.newtype else t, d)
            return
        if isinstance(d, A.ConstDecl):
            self.const_decl(d)
            return
        if isinstance(d, A.ExternDecl):
            self.declare_type(d.name, ("extern", d), d)
            return
        if isinstance(d, A.ExternFunc):
            self.st.declare(d.name, Sym("extern_func", decl=[d.proto]), d)
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
                raise self.st.err(f"unsupported: generic {kind} declarations", d, P4Unsupported)
            instantiate_direct_calls(d, self._is_block_type)
            self.declare_type(d.name, (kind, d), d)
            self.st.blocks[d.name] = d
            return
        if isinstance(d, A.ActionDecl):
            self.st.ctx = Ctx("control", "", "", False)
            self.tables.action_decl(d, "")
            self.st.ctx = None
            return
        if isinstance(d, A.FunctionDecl):
            self.block.function_decl(d)
            return
        if isinstance(d, A.Instantiation):
            self.st.ctx = Ctx("control", "", "", False)
            self.instances.instantiation(d, "")
            self.st.ctx = None
            return
        if isinstance(d, A.VarDecl):
            raise self.st.err("variables cannot be declared at the top level", d)
        raise self.st.err(f"unsupported declaration {type(d).__name__}", d, P4Unsupported)

    def specialize(self, d, tref) -> T.Type:
        """`S<bit<8>>` of a generic struct/header: one type per distinct argument list."""
        if len(tref.args) != len(d.type_params):
            raise self.st.err(f"type '{d.name}' takes {len(d.type_params)} type argument(s), got {len(tref.args)}",
                           tref)
        args = tuple(self.resolve_type(a) for a in tref.args)
        key = (d.name, tuple(str(a) for a in args))
        hit = self.st.specialized.get(key)
        if hit is not None:
            return hit
        self.st.tvars.append(dict(zip(d.type_params, args, strict=True)))
        try:
            t = self.type_decl(d, f"{d.name}<{', '.join(key[1])}>")
        finally:
            self.st.tvars.pop()
        self.st.specialized[key] = t
        return t

    def type_decl(self, d, specialized: str | None = None):
        if d.type_params and specialized is None:
            self.declare_type(d.name, ("generic", d), d)
            return None
        name = specialized or d.name
        t: T.HeaderT | T.StructT | T.UnionT
        if isinstance(d, A.HeaderDecl):
            t = T.HeaderT(name)
        elif isinstance(d, A.StructDecl):
            t = T.StructT(name)
        else:
            t = T.UnionT(name)
        t.decl_annos = d.annos
        if specialized is None:
            self.declare_type(d.name, t, d)
        for f in d.fields:
            if f.name in t.fields:
                raise self.st.err(f"duplicate field '{f.name}' in {d.name}", f)
            ft = self.resolve_type(f.type)
            base = T.strip_new(ft)
            if isinstance(t, T.HeaderT):
                if isinstance(base, T.Varbit):
                    if any(isinstance(T.strip_new(x), T.Varbit) for x in t.fields.values()):
                        # BMv2 headers have at most one variable-length field
                        raise self.st.err(f"unsupported: more than one varbit field in header {d.name}", f,
                                       P4Unsupported)
                    t.fields[f.name] = ft
                    t.annos[f.name] = f.annos
                    continue
                if not (isinstance(base, T.Bits | T.BoolT) or (isinstance(base, T.EnumT) and base.base)
                        or (isinstance(base, T.StructT) and _flat_struct(base))):
                    raise self.st.err(f"header field '{f.name}' has type {ft}; header fields must be bit<N>, int<N>, "
                                   "bool or a serializable enum", f)
            if isinstance(t, T.UnionT) and not isinstance(base, T.HeaderT):
                raise self.st.err(f"header_union member '{f.name}' must be a header", f)
            t.fields[f.name] = ft
            t.annos[f.name] = f.annos
        if isinstance(t, T.HeaderT):
            if t.width % 8:
                self.st.odd_headers.append((d, t.width))     # p4c-bm2-ss's back end says so after the rest
            ch = _anno_arg(d.annos, "controller_header")
            if ch is not None:
                widths: list[tuple[str, int, list]] = []
                ftypes: list[T.Type] = []

                def flatten(prefix: str, fields: dict, annos: dict) -> None:
                    # p4c lists a struct-typed field's members, `b.b`, `b.c`, in order (same bytes on the wire)
                    for n, ft in fields.items():
                        inner = T.strip_new(ft)
                        if isinstance(inner, T.StructT):
                            flatten(f"{prefix}{n}.", inner.fields, inner.annos)
                            continue
                        w = T.bit_width(ft)
                        if w is None:      # P4Info gives each metadata field a bit width
                            raise self.st.err(f"unsupported: field '{n}' of @controller_header header {d.name} is "
                                              f"not bit<W>, int<W>, bool or a serializable enum", d, P4Unsupported)
                        widths.append((prefix + n, w, annos.get(n, [])))
                        ftypes.append(ft)

                flatten("", t.fields, t.annos)
                self.st.info.controller_headers[ch] = controlplane.ControllerHeaderInfo(ch, d.name, widths, d.annos,
                                                                                       ftypes)
        return t

    def enum_decl(self, d):
        if d.base is None:
            t = T.EnumT(d.name, list(d.members), None, {m: i for i, m in enumerate(d.members)})
        else:
            base = T.strip_new(self.resolve_type(d.base))
            if not isinstance(base, T.Bits):
                raise self.st.err(f"serializable enum must have a bit<N> or int<N> base type, not {base}", d)
            vals = {}
            for m, v in zip(d.members, d.values, strict=True):
                e = self.exprs.expr(v, base)
                if e.const is None:
                    raise self.st.err(f"value of enum member {m} must be a compile-time constant", v)
                vals[m] = wrap(e.const, base)
            t = T.EnumT(d.name, list(d.members), base, vals)
        if len(set(d.members)) != len(d.members):
            raise self.st.err(f"duplicate member in enum {d.name}", d)
        self.declare_type(d.name, t, d)

    V1MODEL_VERSIONS = (20180101, 20200408)

    def const_decl(self, d) -> None:
        if d.name == "__v1model_version" and not self.st.scopes:
            self.check_v1model_version(d)
        t = self.resolve_type(d.type)
        e = self.exprs.coerce(self.exprs.expr(d.value, t), t, d.value, f"constant {d.name}")
        if e.const is None and tir.is_constant_aggregate(e.node):
            # a struct or tuple of constants: each use builds the value afresh (value semantics), and a field of
            # it is folded to its constant (expressions.x_Member / x_Index)
            self.st.declare(d.name, Sym("const", t, "", None, decl=d, info=e.node), d)
            return
        if e.const is None:
            raise self.st.err(f"initializer of constant '{d.name}' is not a compile-time constant", d.value)
        self.st.declare(d.name, Sym("const", t, e.code, e.const, decl=d), d)
