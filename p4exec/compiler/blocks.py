"""Whole blocks: controls, parsers (states, transitions, select, value sets), functions, the v1model main
package and the final module assembly."""
from __future__ import annotations

from typing import Any

from p4exec.compiler import controlplane, nrecord, tir
from p4exec.compiler import types as T
from p4exec.compiler.compile_state import CompileState
from p4exec.compiler.emit import Emitter, pyident
from p4exec.compiler.faults import PRELUDE as FAULTS_PRELUDE
from p4exec.compiler.faults import V1_ERRORS
from p4exec.compiler.parts import (
    CallPart,
    DataTypePart,
    DeclarationPart,
    ExpressionPart,
    InstancePart,
    RulesPart,
    StatementPart,
    TablePart,
)
from p4exec.compiler.symbols import LV, Ctx, E, Sym, _anno_arg, _loc, expr_text
from p4exec.errors import P4Unsupported
from p4exec.frontend import ast as A
from p4exec.frontend.parser import name_loc


class BlockCompiler:
    """Controls, parsers, functions, v1model main and module assembly."""

    calls: CallPart
    checks: RulesPart
    decls: DeclarationPart
    exprs: ExpressionPart
    instances: InstancePart
    pytypes: DataTypePart
    statements: StatementPart
    tables: TablePart

    def __init__(self, st: CompileState) -> None:
        self.st = st
        self.types_lines = 0  # set by module_source

    def compile_control(self, d: A.ControlDecl, prefix: str, roots: dict | None = None,
                        consts: list | None = None) -> str:
        saved_ctx = self.st.ctx
        self.st.scopes = [{}]
        for cname, csym in consts or ():
            self.st.scopes[0][cname] = csym
        fname = self.st.unique("C_" + prefix)
        ptypes = [self.decls.resolve_type(p.type) for p in d.params]
        scalar_params = [p for p, t in zip(d.params, ptypes, strict=True) if T.strip_new(t).is_scalar]
        needs_frame = bool(scalar_params) or any(isinstance(x, A.VarDecl) for x in d.locals)
        obj_py = []
        ctx = Ctx("control", prefix, "", needs_frame, control=d, roots={})
        self.st.ctx = ctx
        fargs = []
        init = Emitter()
        frame_slots = []
        outs = []
        rec = nrecord.ControlRec(fname, [], [], ())
        for p, t in zip(d.params, ptypes, strict=True):
            py = "p_" + pyident(p.name)
            fargs.append(py)
            rec.params.append((py, t, p.direction or "in"))
            bt = T.strip_new(t)
            if bt.is_scalar:
                frame_slots.append(py)
                self.st.declare(p.name, Sym("param", t, f"L.{py}", direction=p.direction or "in"), p)
                init(f"L.{py} = {py}")
                if p.direction in ("out", "inout"):
                    outs.append(f"L.{py}")
            else:
                obj_py.append(py)
                if isinstance(bt, T.ExternT) and bt.name == "packet_out":
                    self.st.declare(p.name, Sym("instance", t, py, direction="in"), p)
                else:
                    self.st.declare(p.name, Sym("param", t, py, direction=p.direction or "in"), p)
        if roots:
            for i, role in roots.items():
                ctx.roots["p_" + pyident(d.params[i].name)] = role
        ctx.ctx_args = ", ".join(obj_py + (["L"] if needs_frame else []))
        frame_cls = None
        if needs_frame:
            frame_cls = self.st.unique("F_" + prefix)
        prelude: list[tir.Stmt] = []     # initializers run as the first statements of the body
        for loc in d.locals:
            if isinstance(loc, A.VarDecl):
                t = self.decls.resolve_type(loc.type)
                py = "v_" + pyident(loc.name)
                frame_slots.append(py)
                if loc.init is not None:
                    v, stmt = self.local_initializer(loc, t, f"L.{py}", force=bool(prelude))
                    if stmt is not None:
                        prelude.append(stmt)
                        init(f"L.{py} = {self.pytypes.default_value(t)}")
                        rec.frame.append((py, t, None))
                    else:
                        init(f"L.{py} = {self.exprs.objval(v)}")
                        rec.frame.append((py, t, v.node))
                else:
                    init(f"L.{py} = {self.pytypes.default_value(t)}")
                    rec.frame.append((py, t, None))
                self.st.declare(loc.name, Sym("var", t, f"L.{py}"), loc)
            elif isinstance(loc, A.ConstDecl):
                self.decls.const_decl(loc)
            elif isinstance(loc, A.ActionDecl):
                self.tables.action_decl(loc, prefix)
            elif isinstance(loc, A.TableDecl):
                self.tables.table_decl(loc, prefix)
            elif isinstance(loc, A.Instantiation):
                self.instances.instantiation(loc, prefix)
            elif isinstance(loc, A.FunctionDecl):
                raise self.st.err("unsupported: functions declared inside a control", loc, P4Unsupported)
            else:
                raise self.st.err(f"unsupported control-local declaration {type(loc).__name__}", loc, P4Unsupported)
        if frame_cls:
            self.st.out(f"class {frame_cls}:")
            self.st.out(f"    __slots__ = {tuple(frame_slots)!r}")
        em = Emitter()
        em(f"def {fname}({', '.join(fargs)}):")
        em.indent()
        if frame_cls:
            em(f"L = {frame_cls}()")
        em.extend(init)
        ctx.kind = "control"
        ctx.out_params = outs
        ctx.pyused = set(fargs) | {"L"}
        self.st.push()
        n0 = len(em.lines)
        rec.body = self.statements.function_body(d.body.stmts)
        if prelude:
            rec.body = ((tir.OutsOnExit(rec.body[0].outs, (*prelude, *rec.body[0].body)),)
                        if outs and isinstance(rec.body[0], tir.OutsOnExit) else (*prelude, *rec.body))
        self.st.native.controls[fname] = rec
        for node in rec.body:
            self.statements.emit_stmt(node, em)
        if outs:
            em(self.statements.ret_code(None))
        elif len(em.lines) == n0:
            em("pass")
        self.st.pop()
        em.dedent()
        self.statements.emit_function(em)
        self.st.ctx = saved_ctx
        return fname

    def local_initializer(self, loc: A.VarDecl, t: T.Type, py: str, force: bool) -> tuple[E, tir.Stmt | None]:
        """A control-local's initializer, checked. One that calls with out/inout arguments or applies a table (or
        comes after such a one: declaration order) becomes an assignment statement at the start of the body, run
        per packet in order (as p4c moves control-local initializers into the apply block); the others stay
        values the frame is built with. Returns the value and that statement, or None."""
        mark = len(self.st.pending_defs)
        self.st.stmt_depth += 1      # a call with out arguments may be planned here: it gets a statement
        try:
            v = self.exprs.coerce(self.exprs.expr(loc.init, t), t, loc.init, f"initializer of {loc.name}")
        finally:
            self.st.stmt_depth -= 1
        helpers = tuple(self.st.pending_defs[mark:])
        del self.st.pending_defs[mark:]
        if not (force or helpers or tir.has_effects(v.node)):
            return v, None
        target = tir.Name(t, py)
        stmt = self.statements.assignment(E(t, target, lv=LV(target)), E(t, self.exprs.objnode(v)))
        return v, (tir.Block((*helpers, stmt)) if helpers else stmt)

    # ------------------------------------------------------------------ parsers
    def compile_parser(self, d: A.ParserDecl, prefix: str, consts: list | None = None, sub: bool = False) -> str:
        """The top-level parser returns (offset, error code); a sub-parser takes and returns the offset and
        raises the parser error (reject: code -1) to its caller."""
        saved_ctx = self.st.ctx
        self.st.scopes = [{}]
        for cname, csym in consts or ():
            self.st.scopes[0][cname] = csym
        fname = self.st.unique("P_" + prefix)
        ctx = Ctx("parser", prefix, "", False, control=d)
        ctx.sub_parser = sub
        self.st.ctx = ctx
        fargs = ["data", "off"] if sub else ["data"]
        ctx.pyused = {"data", "off", "n", "st", "_x", "_h", "_u", "_L", "_nb"}
        prec = nrecord.ParserRec(fname, [], sub=sub)
        self.st.native.parsers[fname] = prec
        for p in d.params:
            t = self.decls.resolve_type(p.type)
            bt = T.strip_new(t)
            if isinstance(bt, T.ExternT) and bt.name == "packet_in":
                self.st.declare(p.name, Sym("instance", t, "data", direction="in"), p)
                continue
            py = "p_" + pyident(p.name)
            fargs.append(py)
            prec.params.append((py, t, p.direction or "in"))
            ctx.pyused.add(py)
            self.st.declare(p.name, Sym("param", t, py, direction=p.direction or "in"), p)
            if sub and p.direction in ("out", "inout") and bt.is_scalar:
                ctx.out_params.append(py)     # a sub-parser returns (scalar outs..., offset) on accept
        em = Emitter()
        em(f"def {fname}({', '.join(fargs)}):")
        em.indent()
        em("n = len(data)")
        if not sub:
            em("off = 0")
        for p in d.params if sub else ():
            if p.direction == "out":
                for inv in _out_headers_invalid(self.decls.resolve_type(p.type), tir.Name(
                        self.decls.resolve_type(p.type), "p_" + pyident(p.name))):
                    prec.locals.append(inv)
                    self.statements.emit_stmt(inv, em)
        for loc in d.locals:
            if isinstance(loc, A.VarDecl):
                lnode = self.statements.node(loc)
                prec.locals.append(lnode)
                self.statements.emit_stmt(lnode, em)
            elif isinstance(loc, A.ConstDecl):
                self.decls.const_decl(loc)
            elif isinstance(loc, A.ValueSetDecl):
                self.value_set_decl(loc, prefix)
            elif isinstance(loc, A.Instantiation):
                self.instances.instantiation(loc, prefix)
            else:
                raise self.st.err(f"unsupported parser-local declaration {type(loc).__name__}", loc, P4Unsupported)
        states = {}
        for i, s in enumerate(d.states):
            if s.name in ("accept", "reject"):
                raise self.st.err(f"state '{s.name}' cannot be declared", s)
            if s.name in states:
                raise self.st.err(f"duplicate state '{s.name}'", s)
            states[s.name] = i
        if "start" not in states:
            raise self.st.err(f"parser {d.name} has no 'start' state", d)
        self.checks.check_parser_terminates(d, states)
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
            self.st.push()
            srec = nrecord.StateRec(s.name, i, [])
            prec.states.append(srec)
            for x in s.stmts:
                snode = self.statements.node(x)
                srec.body.append(snode)
                self.statements.emit_stmt(snode, em)
            self._srec = srec
            self.transition(s, states, em)
            self.st.pop()
            em.dedent()
        em(self._goto("accept", states, d))
        em.dedent()
        em.dedent()
        em("except _ParserErr as e:")
        if sub:
            em("    if e.off is None: e.off = off")
            if ctx.out_params:      # copied out by the caller even on a reject, as BMv2 does
                em(f"    e.outs = ({', '.join(ctx.out_params)},)")
            em("    raise")
        else:
            em("    return (off if e.off is None else e.off), e.code")
        em.dedent()
        self.statements.emit_function(em)
        self.st.ctx = saved_ctx
        return fname

    def value_set_decl(self, d: A.ValueSetDecl, prefix: str):
        t = self.decls.resolve_type(d.type)
        bt = T.strip_new(t)
        size = self.decls.const_int(d.size, "value_set size")
        fields = []
        if isinstance(bt, T.Bits):
            fields.append(("", bt.width, "exact"))
        elif isinstance(bt, T.StructT):
            for f, ft in bt.fields.items():
                w = T.bit_width(ft)
                if w is None:
                    raise self.st.err(f"value_set field '{f}' must be bit<N>", d)
                mk = _anno_arg(bt.annos.get(f), "match") or "exact"
                if mk not in ("exact", "ternary", "lpm", "range", "optional"):
                    raise self.st.err(f"unsupported match kind '{mk}' in a value_set", d)
                fields.append((f, w, mk))
        else:
            raise self.st.err(f"value_set elements must be bit<N> or a struct, not {t}", d)
        fqn = self.tables.fq(prefix, d.name, d.annos)
        py = self.st.unique("VS_" + fqn)
        self.st.info.value_sets[fqn] = controlplane.ValueSetInfo(fqn, size, fields)
        self.st.info.value_sets[fqn].annos = d.annos
        self.st.bind.append((py, "value_set", fqn))
        self.st.declare(d.name, Sym("value_set", t, py, info=self.st.info.value_sets[fqn]), d)

    def _goto(self, name, states, node) -> str:
        sub = getattr(self.st.ctx, "sub_parser", False)
        if name == "accept":
            if sub and self.st.block_ctx.out_params:
                return f"return ({', '.join(self.st.block_ctx.out_params)}, off)"
            return "return off" if sub else "return off, 0"
        if name == "reject":
            return "raise _ParserErr(-1)" if sub else "return off, -1"
        if name not in states:
            other = self.st.lookup_opt(name)
            if other is not None and other.kind == "action":
                raise self.st.err(f"'{name}' is an action, not a parser state (a transition names a state)",
                               name_loc(name, _loc(node)))
            raise self.st.err(f"unknown parser state '{name}'", name_loc(name, _loc(node)))
        return f"st = {states[name]}; continue"

    def transition(self, s: A.ParserState, states, em: Emitter):
        tr = s.transition
        srec = self._srec
        if tr is None:
            em(self._goto("reject", states, s))
            return
        if isinstance(tr, str):
            em(self._goto(tr, states, s))
            srec.target = tr
            return
        keys = [self.exprs.expr(x) for x in tr.exprs]
        srec.keys = [k.node for k in keys]
        kvars = []
        for k in keys:
            if isinstance(T.strip_new(k.type), T.InfIntT):
                raise self.st.err("select key needs a width", tr)
            v = self.st.tmp()
            em(f"{v} = {k.code}")
            kvars.append(v)
        for c in tr.cases:
            if isinstance(c.keyset, A.Name):
                vs = self.st.lookup_opt(c.keyset.name)
                if vs is not None and vs.kind == "value_set":
                    n = len(vs.info.fields)
                    if n != len(kvars):
                        raise self.st.err(f"value_set {c.keyset.name} has {n} field(s), the select has {len(kvars)} "
                                       "key(s)", c.keyset)
                    em(f"if {vs.py}.matches(({''.join(k + ', ' for k in kvars)})): "
                       f"{self._goto(c.state, states, c)}")
                    srec.cases.append(nrecord.SelectCase([], c.state, vs.py))
                    continue
            items = self.tables.keyset_items(c.keyset, len(keys))
            conds = []
            self._items: list = []
            for k, kv, it in zip(keys, kvars, items, strict=True):
                conds.append(self._select_cond(k, kv, it))
            srec.cases.append(nrecord.SelectCase(self._items, c.state))
            conds = [x for x in conds if x != "True"]
            em(f"if {' and '.join(conds) or 'True'}: {self._goto(c.state, states, c)}")
        em(f"raise _ParserErr({V1_ERRORS.index('NoMatch')})")

    def _select_cond(self, k: E, kv: str, it) -> str:
        t = k.type
        if isinstance(it, A.KsDefault | A.KsDontCare):
            self._items.append(("default",))
            return "True"
        if isinstance(it, A.KsMask):
            v = self._select_label(it.value, t, "select case")
            m = self._select_label(it.mask, t, "select mask")
            self._items.append(("mask", v.node, m.node))
            if v.const is not None and m.const is not None:
                return f"({kv} & {m.const:#x}) == {v.const & m.const:#x}"
            return f"({kv} & {m.code}) == ({v.code} & {m.code})"
        if isinstance(it, A.KsRange):
            lo = self._select_label(it.lo, t, "select range")
            hi = self._select_label(it.hi, t, "select range")
            self._items.append(("range", lo.node, hi.node))
            return f"{lo.code} <= {kv} <= {hi.code}"
        v = self._select_label(it, t, "select case")
        self._items.append(("value", v.node))
        return f"{kv} == {v.code}"

    def _select_label(self, expr, t, what: str) -> E:
        """A select case's value, mask or bound: p4c refuses a call there ("no function calls allowed in this
        context") and anything not known at compile time (BMv2's parse states hold constants only)."""
        for node in A.walk(expr):
            if isinstance(node, A.Call):
                raise self.st.err(f"{expr_text(node)}: no function calls allowed in this context", node)
        e = self.exprs.coerce(self.exprs.expr(expr, t), t, expr, what)
        if e.const is None:
            raise self.st.err(f"{expr_text(expr)}: must be a compile-time constant", expr)
        return e

    # ------------------------------------------------------------------ functions
    def function_decl(self, d: A.FunctionDecl) -> None:
        proto = d.proto
        if proto.type_params:
            raise self.st.err("unsupported: generic functions", d, P4Unsupported)
        py = self.st.unique("FN_" + d.name)
        self.st.declare(d.name, Sym("function", py=py, decl=d), d)
        saved_ctx, saved_scopes = self.st.ctx, self.st.scopes
        self.st.scopes = [{}]
        ctx = Ctx("function", "", "", False)
        ctx.ret_type = self.decls.resolve_type(proto.ret)
        self.st.ctx = ctx
        names = []
        rec_params = []
        for p in proto.params:
            t = self.decls.resolve_type(p.type)
            pn = "a_" + pyident(p.name)
            names.append(pn)
            rec_params.append((pn, t, p.direction or ""))
            ctx.pyused.add(pn)
            self.st.declare(p.name, Sym("param", t, pn, direction=p.direction or "in"), p)
            if p.direction in ("out", "inout") and T.strip_new(t).is_scalar:
                ctx.out_params.append(pn)
        em = Emitter()
        em(f"def {py}({', '.join(names)}):")
        em.indent()
        self.st.push()
        body = []
        for s in d.body.stmts:      # checked and written one by one, as before (same temps, same Python)
            body.append(self.statements.node(s))
            self.statements.emit_stmt(body[-1], em)
        self.st.native.functions[py] = nrecord.FunctionRec(py, rec_params, ctx.ret_type, tuple(body))
        self.st.pop()
        em(self.statements.ret_code(None) if isinstance(ctx.ret_type, T.VoidT) or True else "")
        em.dedent()
        self.st.out.extend(em)
        self.st.ctx, self.st.scopes = saved_ctx, saved_scopes

    # ------------------------------------------------------------------ v1model main
    def compile_main(self, main: A.Instantiation) -> None:
        pt = self.decls.resolve_type(main.type)
        assert isinstance(pt, T.BlockT)   # run() picks main only when its type is a package
        pkg = pt.decl
        if pkg.name != "V1Switch":
            raise self.st.err(f"unsupported: package {pkg.name} (p4exec implements the v1model V1Switch package)",
                           main, P4Unsupported)
        if len(main.args) != len(pkg.params):
            raise self.st.err(f"V1Switch expects {len(pkg.params)} arguments, got {len(main.args)}", main)
        # named arguments (`V1Switch(p = MyParser(), ig = ...)`) in any order, as p4c allows
        main_args = self.calls.bind_args(pkg.params, main.args, main, "V1Switch")
        found = []
        kinds = ["parser", "control", "control", "control", "control", "control"]
        roles = ["parser", "verify", "ingress", "egress", "compute", "deparser"]
        for i, a in enumerate(main_args):
            v = a.value
            ctor_args = []
            if isinstance(v, A.CtorCall):
                t = self.decls.resolve_type(v.type)
                ctor_args = v.args
            elif isinstance(v, A.Name):
                s = self.st.lookup(v.name, v)
                t = s.type
            else:
                raise self.st.err("V1Switch arguments must be parser/control instances", v)
            if not isinstance(t, T.BlockT) or t.kind != kinds[i] or not isinstance(t.decl, A.ParserDecl |
                                                                                      A.ControlDecl):
                raise self.st.err(f"argument {i + 1} of V1Switch ({roles[i]}) must be a {kinds[i]}, not {t}", v)
            if isinstance(v, A.Name) and isinstance(s.decl, A.Instantiation):
                ctor_args = s.decl.args
            found.append((t.decl, v, self.instances.ctor_consts(t.decl, ctor_args, v)))
        consts_of = {id(b[0]): b[2] for b in found}
        blocks = [(b[0], b[1]) for b in found]
        pdecl = blocks[0][0]
        if len(pdecl.params) != 4:
            raise self.st.err("the v1model parser must have 4 parameters (packet_in, out H, inout M, inout "
                           "standard_metadata_t)", pdecl)
        H = self.decls.resolve_type(pdecl.params[1].type)
        M = self.decls.resolve_type(pdecl.params[2].type)
        SM = self.st.types.get("standard_metadata_t")
        self.st.v1 = {"H": H, "M": M, "SM": SM}
        expect: dict[str, list[tuple[str, Any]]] = {
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
                raise self.st.err(f"{role} block {decl.name} must have {len(exp)} parameters, has "
                               f"{len(decl.params)}", decl)
            for p, (dirn, et) in zip(decl.params, exp, strict=True):
                t = self.decls.resolve_type(p.type)
                if isinstance(et, str):
                    if not (isinstance(t, T.ExternT) and t.name == et):
                        raise self.st.err(f"parameter '{p.name}' of {decl.name} must be {et}", p)
                    continue
                if not T.same_type(T.strip_new(t), T.strip_new(et)):
                    raise self.st.err(f"parameter '{p.name}' of {decl.name} has type {t}, but the parser's "
                                   f"{'headers' if et is H else 'metadata' if et is M else 'standard metadata'}"
                                   f" type is {et}", p)
                if (p.direction or "") != dirn and not (role == "deparser" and p.direction in ("in", "inout", "")):
                    raise self.st.err(f"parameter '{p.name}' of {decl.name} must be '{dirn}'", p)
        if not isinstance(T.strip_new(H), T.StructT):
            raise self.st.err(f"the headers type must be a struct, not {H}", pdecl.params[1])
        if not isinstance(T.strip_new(M), T.StructT):
            raise self.st.err(f"the metadata type must be a struct, not {M}", pdecl.params[2])
        entry = {}
        for (decl, _node), role in zip(blocks, roles, strict=True):
            prefix = decl.name      # p4c names a V1Switch block by its declaration and ignores its @name
            self.st.pipeline_role = role     # which V1Switch block is being compiled (p4c-bm2-ss's blockConverted)
            if role == "parser":
                assert isinstance(decl, A.ParserDecl)     # checked against `kinds` above
                entry[role] = self.compile_parser(decl, prefix, consts_of[id(decl)])
            else:
                assert isinstance(decl, A.ControlDecl)
                if role in ("verify", "compute"):
                    self.checks.check_checksum_control(decl, role)
                roots = {1: "m", 2: "sm"} if role in ("ingress", "egress") else None
                if roots is not None:
                    self.st.pipeline_controls.append((decl, prefix))
                entry[role] = self.compile_control(decl, prefix, roots, consts_of[id(decl)])
        self.st.pipeline_role = None
        self.st.entry = entry

    # ------------------------------------------------------------------ module assembly
    def module_source(self) -> str:
        """The generated module. Its first `types_lines` lines (prelude and the header/struct classes) refer to
        nothing of one instance, so a loader may run them once for all instances of the program: one set of
        classes keeps the interpreter's attribute caches valid when packets go through many switches."""
        for k in ("H", "M", "SM"):
            self.pytypes.pyclass(self.st.v1[k])
        src = Emitter()
        src("# generated by p4exec from P4 source; do not edit")
        src("_EXIT = _Exit()")
        src(FAULTS_PRELUDE)
        src("def _stk_next_p(s):")
        src(f"    if s.nxt >= s.size: raise _ParserErr({V1_ERRORS.index('StackOutOfBounds')})")
        src("    return s.h[s.nxt]")
        src("def _NOFL(m_src, sm_src, m_dst, sm_dst):")
        src("    pass")
        src.lines.extend(self.st.class_code.lines)
        self.types_lines = "\n".join(src.lines).count("\n") + 1
        # _mk / _unpack helpers for every class
        src.lines.extend(self.st.out.lines)
        for name, _key, paths in self.st.field_lists:
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
        e = self.st.entry
        src(f"PARSER = {e['parser']}")
        src(f"VERIFY = {e['verify']}")
        src(f"INGRESS = {e['ingress']}")
        src(f"EGRESS = {e['egress']}")
        src(f"COMPUTE = {e['compute']}")
        src(f"DEPARSER = {e['deparser']}")
        src(f"NEW_H = {self.pytypes.pyclass(self.st.v1['H'])}")
        src(f"NEW_M = {self.pytypes.pyclass(self.st.v1['M'])}")
        src(f"NEW_SM = {self.pytypes.pyclass(self.st.v1['SM'])}")
        return src.text()


def _out_headers_invalid(t: T.Type, node: tir.Expr) -> list[tir.Stmt]:
    """A sub-parser's `out` header (or the headers of an `out` struct or union) starts invalid: p4c's inliner
    makes it so before the sub-parser's start state (measured with BMv2); scalars stay as the caller left them."""
    bt = T.strip_new(t)
    if isinstance(bt, T.HeaderT):
        return [tir.SetValidity(node, False)]
    if isinstance(bt, (T.StructT, T.UnionT)):
        return [s for f, ft in bt.fields.items() for s in _out_headers_invalid(ft, tir.Field(ft, node, f))]
    return []
