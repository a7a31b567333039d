"""Actions and tables: fully-qualified names, action bodies, table properties, keys, const entries and
their action dispatchers; the part that feeds P4Info and the runtime's table objects."""
from __future__ import annotations

import re

from p4exec.compiler import controlplane, exprgen, nrecord, tir
from p4exec.compiler import types as T
from p4exec.compiler.compile_state import CompileState
from p4exec.compiler.emit import Emitter, pyident
from p4exec.compiler.parts import CallPart, DeclarationPart, ExpressionPart, InstancePart, StatementPart
from p4exec.compiler.symbols import Ctx, Sym, _anno_arg, expr_text
from p4exec.errors import P4Unsupported
from p4exec.frontend import ast as A
from p4exec.frontend.parser import name_loc


def _literal_name(e: A.IntLit) -> str:
    """A constant as p4c prints it in a key name: its value in the base it was written in, no width."""
    text = re.sub(r"^\d+[ws]", "", e.text or str(e.value)).lower().replace("_", "")
    prefix = text[:2] if text[:2] in ("0x", "0b", "0o") else ""
    base = {"0x": 16, "0b": 2, "0o": 8}.get(prefix, 10)
    v, digits = abs(e.value), ""
    while True:
        digits = "0123456789abcdef"[v % base] + digits
        v //= base
        if not v:
            break
    return ("-" if e.value < 0 else "") + prefix + digits


class TableCompiler:
    """Actions and tables."""

    calls: CallPart
    decls: DeclarationPart
    exprs: ExpressionPart
    instances: InstancePart
    statements: StatementPart

    def __init__(self, st: CompileState) -> None:
        self.st = st

    # ------------------------------------------------------------------ names
    @staticmethod
    def fq(prefix: str, name: str, annos) -> str:
        n = _anno_arg(annos, "name")
        if isinstance(n, str) and n:
            if n.startswith("."):
                return n[1:]
            name = n
        return f"{prefix}.{name}" if prefix else name

    def _key_name(self, e) -> str:
        """p4c's control-plane name of a key without `@name` (KeyNameGenerator in tableKeyNames.cpp): names,
        fields (a field's own `@name`; one starting with '.' drops the left-hand side), constant indices and
        slices, `&`, `h.isValid()` as `h.$valid$`, constants in their base without width (`0xf0f`). Anything
        else needs a `@name`."""
        if isinstance(e, A.Name):
            return expr_text(e)
        if isinstance(e, A.IntLit):
            return _literal_name(e)
        if isinstance(e, A.Call) and isinstance(e.func, A.Member) and e.func.name == "isValid" and not e.args:
            if isinstance(T.strip_new(self.exprs.expr(e.func.expr).type), T.HeaderT | T.UnionT):
                return f"{self._key_name(e.func.expr)}.$valid$"
        if isinstance(e, A.Member):
            fname = e.name
            lt = self.exprs.expr(e.expr).type
            if isinstance(lt, T.FieldsType):
                named = _anno_arg(lt.annos.get(e.name, []), "name")
                if isinstance(named, str) and named:
                    fname = named
            if fname.startswith("."):
                return fname[1:]
            return f"{self._key_name(e.expr)}.{fname}"
        if isinstance(e, A.Index):
            return f"{self._key_name(e.expr)}[{self._key_name(e.index)}]"
        if isinstance(e, A.Slice):
            return f"{self._key_name(e.expr)}[{self._key_name(e.hi)}:{self._key_name(e.lo)}]"
        if isinstance(e, A.Binary) and e.op == "&":
            return f"{self._key_name(e.left)} & {self._key_name(e.right)}"
        raise self.st.err(f"{expr_text(e)}: Complex key expression requires a @name annotation", e)

    def claim_control_plane_name(self, fqn: str, kind: str, node) -> None:
        """p4c: two tables may not share a fully-qualified name (after @name), e.g. two tables @name("t"), or one
        control with a table instantiated twice under one @name."""
        key = (kind, fqn)
        prev = self.st.cp_names.get(key)
        if prev is not None and (kind == "table" or prev[1] is not node):
            # an action declaration compiled again for a second instance of its control keeps its one name
            raise self.st.err(f"conflicting control-plane name '{fqn}': another {kind} has it (at {prev[0]})", node)
        self.st.cp_names[key] = (node.loc, node)

    # ------------------------------------------------------------------ actions
    def action_decl(self, d: A.ActionDecl, prefix: str) -> controlplane.ActionInfo:
        fqn = self.fq(prefix, d.name, d.annos)
        pyf = self.st.unique("A_" + fqn)
        seen_dirless = False
        self.st.action_declaring = fqn
        cp = []
        for p in d.params:
            if p.direction == "":
                seen_dirless = True
                t = self.decls.resolve_type(p.type)
                w = T.bit_width(t)
                if w is None or not T.strip_new(t).is_scalar:
                    raise self.st.err(f"action parameter '{p.name}' has type {t}; control-plane parameters must be "
                                   "bit<N>, int<N>, bool or a serializable enum", p)
                named = _anno_arg(p.annos, "name")    # a parameter's @name is its control-plane name (p4c)
                cp.append(controlplane.ParamInfo(named if isinstance(named, str) and named else p.name, w, p.annos, t))
            elif seen_dirless:
                raise self.st.err(f"directional parameter '{p.name}' after a directionless one (directional "
                               "parameters come first)", p)
        self.st.action_declaring = None
        info = controlplane.ActionInfo(fqn, d.name, cp, d.annos, pyf, len(d.params) - len(cp), decl=d)
        sym = Sym("action", py=pyf, info=info, const="local" if prefix else "global")
        self.st.info.action_events.append((self.st.pipeline_role, fqn, "decl" if prefix else "global"))
        # two action declarations may not share a control-plane name (frontend_rules, before compiling); one
        # declaration compiled for each instance of its control keeps its one name
        self.st.declare(d.name, sym, d)
        saved = self.st.block_ctx
        ctx = Ctx("action", prefix, saved.ctx_args if prefix else "", saved.frame, control=saved.control,
                  roots=saved.roots)
        ctx.action = info
        self.st.ctx = ctx
        self.st.push()
        pnames = []
        for p in d.params:
            t = self.decls.resolve_type(p.type)
            py = "a_" + pyident(p.name)
            if py in ctx.pyused:
                raise self.st.err(f"duplicate parameter '{p.name}'", p)
            ctx.pyused.add(py)
            pnames.append(py)
            self.st.declare(p.name, Sym("param", t, py, direction=p.direction or "in"), p)
            if p.direction in ("out", "inout") and T.strip_new(t).is_scalar:
                ctx.out_params.append(py)
        em = Emitter()
        args = ([ctx.ctx_args] if ctx.ctx_args else []) + pnames
        em(f"def {pyf}({', '.join(args)}):")
        em.indent()
        n0 = len(em.lines)
        body = self.statements.function_body(d.body.stmts)
        self.st.native.actions[pyf] = nrecord.ActionRec(
            pyf, fqn, [x.strip() for x in (ctx.ctx_args or "").split(",") if x.strip()],
            [(py, self.decls.resolve_type(p.type), p.direction or "") for py, p in zip(pnames, d.params, strict=True)],
            body)
        for node in body:
            self.statements.emit_stmt(node, em)
        # header/struct arguments are passed by reference; that differs from copy-in/copy-out only when the body
        # also reaches the caller's objects (the control's parameters or locals), e.g. `a(hdr.h)` writing
        # hdr.h.x and h.x: then the call copies in and out so the copy-out wins, as in P4 and BMv2
        outer = [x.strip() for x in (ctx.ctx_args or "").split(",") if x.strip()] + ["L"]
        has_obj_out = any(p.direction in ("out", "inout") and not T.strip_new(self.decls.resolve_type(p.type)).is_scalar
                          for p in d.params)
        reached = list(tir.python_names(body)) if has_obj_out else []     # names and call contexts the body holds
        info.copy_objects = has_obj_out and any(re.search(rf"\b{re.escape(o)}\b", x) for x in reached for o in outer)
        if ctx.out_params:
            em(self.statements.ret_code(None))
        if len(em.lines) == n0:
            em("pass")
        em.dedent()
        self.st.pop()
        self.st.ctx = saved
        self.statements.emit_function(em)
        return info

    # ------------------------------------------------------------------ tables
    def table_decl(self, d: A.TableDecl, prefix: str) -> controlplane.TableInfo:
        fqn = self.fq(prefix, d.name, d.annos)
        props = {}
        for p in d.props:
            if p.name in props:
                raise self.st.err(f"table property '{p.name}' given twice", p)
            props[p.name] = p
            if p.name == "entries" and "key" not in props and any(q.name == "key" for q in d.props):
                # p4c's type checker reads the entries against the key declared before them
                raise self.st.err("EntriesList: Entries list must be after table key", p)
        if "actions" not in props:
            raise self.st.err(f"table {d.name} has no 'actions' property", d)
        info = controlplane.TableInfo(fqn, d.name, [], [], annos=d.annos, hidden=A.anno(d.annos, "hidden") is not None)
        key_codes = []
        trec = nrecord.TableRec("", fqn, [], [], {})
        if "key" in props:
            lpm = 0
            for k in props["key"].value:
                e = self.exprs.expr(k.expr)
                kt = T.strip_new(e.type)
                if k.match_kind not in self.st.match_kinds:
                    raise self.st.err(f"unknown match kind '{k.match_kind}'", name_loc(k.match_kind, k.loc))
                if k.match_kind not in ("exact", "lpm", "ternary", "range", "optional", "selector"):
                    raise self.st.err(f"unsupported: match kind '{k.match_kind}'", k, P4Unsupported)
                if k.match_kind == "lpm":
                    lpm += 1
                    if lpm > 1:
                        raise self.st.err(f"table {d.name} has more than one lpm key field", k)
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
                    raise self.st.err(f"table key of type {e.type} is not supported", k)
                kname = _anno_arg(k.annos, "name") or self._key_name(k.expr)
                info.keys.append(controlplane.KeyInfo(kname, k.match_kind, w, k.annos, e.type))
                trec.keys.append(nrecord.KeyRec(e.node, k.match_kind, w))
                key_codes.append(code)
        # actions
        refs: dict[str, tuple] = {}
        for ref in props["actions"].value:
            s = self.st.lookup(ref.name, ref)
            if s.kind != "action":
                raise self.st.err(f"'{ref.name}' in the actions of table {d.name} is not an action", ref)
            if s.info.name in refs:
                if refs[s.info.name][0] is not s:
                    # p4c-bm2-ss: "Attempt to add to json object a value for a label which already exists"
                    raise self.st.err(f"table {d.name} lists two actions with the control-plane name "
                                   f"'{s.info.name}' (@name); BMv2's JSON can hold only one", ref)
                raise self.st.err(f"action '{ref.name}' listed twice in table {d.name}", ref)
            scope = "TABLE_AND_DEFAULT"
            if A.anno(ref.annos, "tableonly"):
                scope = "TABLE_ONLY"
            elif A.anno(ref.annos, "defaultonly"):
                scope = "DEFAULT_ONLY"
            info.actions.append(controlplane.ActionRefInfo(s.info, scope, ref.annos))
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
                    raise self.st.err(f"default action '{aname}' is not in the actions list of table {d.name}", v)
                s = refs[aname][0]
                info.default_action = s.info.name
                info.default_args = self._const_action_args(s.info, args, v)
                info.default_const = p.const
                if any(r.action is s.info and r.scope == "TABLE_ONLY" for r in info.actions):
                    raise self.st.err(f"action '{aname}' is @tableonly and cannot be the default action", v)
            elif pname == "size":
                info.size = self.decls.const_int(v, "table size")
            elif pname == "counters":
                inst = self._instance_ref(v, "direct_counter", d, fqn, p.annos)
                info.direct_counter = inst.name
            elif pname == "meters":
                inst = self._instance_ref(v, "direct_meter", d, fqn, p.annos)
                info.direct_meter = inst.name
            elif pname == "implementation":
                inst = self._instance_ref(v, ("action_profile", "action_selector"), d, fqn, p.annos)
                info.implementation = inst.name
            elif pname == "support_timeout":
                e = self.exprs.expr(v)
                info.idle_timeout = bool(e.const)
            elif pname == "largest_priority_wins":
                pass
            elif pname == "priority_delta":
                pass
        if info.implementation and "default_action" in props and info.default_action != "NoAction":
            # backends/bmv2/common/control.cpp: "Target does not support default_action for %1% (due to
            # action profiles)" -- a warning, and the default is left out of the BMv2 JSON, so on BMv2 a miss
            # runs no action while p4exec runs this default.
            loc = getattr(props["default_action"], "loc", None) or d.loc
            self.st.info.warnings.append(f"{loc}: warning: default_action of table {fqn}, which has an "
                                      f"action profile/selector: p4c-bm2-ss ignores it (BMv2 runs no action on "
                                      f"a miss); p4exec runs it")
        if any(k.match_kind == "selector" for k in info.keys):
            impl = self.st.info.externs.get(info.implementation or "")
            if impl is None or impl.kind != "action_selector":
                raise self.st.err(f"table {d.name} has a selector key but no action_selector implementation", d)
        if "entries" in props:
            info.const_entries = props["entries"].const
            self._table_entries(info, props["entries"], refs, d, props)
        if info.default_action is None:
            # p4c's frontend gives a table without default_action `default_action = NoAction()` and, when
            # NoAction is not in its actions list, adds `@defaultonly NoAction` to the list (P4Info: an action
            # ref with @defaultonly, scope DEFAULT_ONLY, and initial_default_action NoAction)
            info.default_action = "NoAction"
            if not any(r.action.name == "NoAction" for r in info.actions):
                na = self.st.globals.get("NoAction")
                if na is None or na.kind != "action":
                    raise self.st.err(f"table {d.name} has no default action and NoAction is not declared", d)
                anno = A.Annotation("defaultonly", "", [], loc=d.loc)
                info.actions.append(controlplane.ActionRefInfo(na.info, "DEFAULT_ONLY", [anno]))
                refs["NoAction"] = (na, A.ActionRef("NoAction", None, [anno], loc=d.loc))
        self.st.info.action_events.extend((self.st.pipeline_role, r.action.name, "use") for r in info.actions)
        info.pyobj = self.st.unique("TBL_" + fqn)
        info.pyfunc = self.st.unique("TA_" + fqn)
        self.st.bind.append((info.pyobj, "table", fqn))
        # dispatchers
        disp = {}
        ctxa = self.st.block_ctx.ctx_args
        for r in info.actions:
            s, ref = refs[r.action.local] if r.action.local in refs else refs[r.action.name]
            a = r.action
            if ref.args or a.n_dir_params:
                if len(ref.args or []) != a.n_dir_params:
                    raise self.st.err(f"action '{a.local}' in table {d.name} must bind its {a.n_dir_params} "
                                   "directional parameter(s)", ref)
                disp[a.name] = self._bound_dispatcher(a, ref, s, ctxa, trec)
                trec.bound = True
            elif s.const == "local" or not ctxa:
                disp[a.name] = a.pyfunc
                trec.dispatch[a.name] = (a.pyfunc, True)
            else:
                trec.dispatch[a.name] = (a.pyfunc, False)
                ad = self.st.unique("D_" + a.name)
                self.st.out(f"def {ad}({ctxa}, *cp):")
                self.st.out(f"    {a.pyfunc}(*cp)")
                disp[a.name] = ad
            self.st.info.actions.setdefault(a.name, a)
        if info.default_action == "NoAction" and "NoAction" not in disp:
            na = self.st.globals.get("NoAction")
            if na is None or na.kind != "action":
                raise self.st.err(f"table {d.name} has no default action and NoAction is not declared", d)
            ad = self.st.unique("D_NoAction")
            self.st.out(f"def {ad}({ctxa + ', ' if ctxa else ''}*cp):")
            self.st.out("    pass")
            disp["NoAction"] = ad
            trec.dispatch["NoAction"] = ("", False)
            self.st.info.actions.setdefault("NoAction", na.info)
        dname = self.st.unique("DISP_" + fqn)
        self.st.out(f"{dname} = {{" + ", ".join(f"{k!r}: {v}" for k, v in disp.items()) + "}")
        trec.func, trec.ctx_args = info.pyfunc, [x.strip() for x in ctxa.split(",") if x.strip()]
        trec.direct_meter = bool(info.direct_meter)
        self.st.native.tables[info.pyfunc] = trec
        em = Emitter()
        em(f"def {info.pyfunc}({ctxa}):")
        em.indent()
        keyt = "(" + "".join(c + ", " for c in key_codes) + ")"
        em(f"r = {info.pyobj}.lookup({keyt}, PK.pkt_len)")
        if info.direct_meter:
            # BMv2: on a hit the table's direct meter runs and writes its result target (see direct_meter.read)
            dm = self.st.info.externs[info.direct_meter]
            self.st.dm_tables[dm.name] = d.loc
            self.st.dm_ctx[dm.name] = ctxa
            em("if r.entry is not None:")
            em(f"    _DMW_{dm.pyobj}({ctxa + ', ' if ctxa else ''}{dm.pyobj}.execute(r.entry, PK.pkt_len, PK.now))")
        em("a = r.action")
        em("if a is not None:")
        em(f"    {dname}[a.action]({ctxa + ', ' if ctxa else ''}*a.args)")
        em("return r")
        em.dedent()
        self.statements.emit_function(em)
        self.claim_control_plane_name(fqn, "table", d)
        self.st.info.tables[fqn] = info
        sym = Sym("table", T.TableT(info), info.pyfunc, info=info)
        self.st.declare(d.name, sym, d)
        _ = by_local
        return info

    def _bound_dispatcher(self, a: controlplane.ActionInfo, ref, sym: Sym, ctxa: str,
                          trec: nrecord.TableRec) -> str:
        """A function running action `a` with the directional arguments bound in the table's action list (its
        call plan also goes to the native record)."""
        d = a.decl
        cps = [p for p in d.params if p.direction == ""]
        self.st.push()
        cp_args = []
        names = []
        for i, p in enumerate(cps):
            py = f"c{i}"
            names.append(py)
            self.st.declare(f"__cp{i}", Sym("param", self.decls.resolve_type(p.type), py, direction="in"), ref)
            cp_args.append(A.Arg(A.Name(f"__cp{i}", loc=ref.loc), loc=ref.loc))
        call = A.Call(A.Name(ref.name, loc=ref.loc), list(ref.args or []) + cp_args, loc=ref.loc)
        prefix = ctxa if sym.const == "local" else ""
        # the bound arguments are evaluated each time the action runs (p4c inlines them into the action): a call
        # with out/inout arguments among them gets its helper in the dispatcher, just before the call
        mark = len(self.st.pending_defs)
        self.st.stmt_depth += 1
        try:
            plan = self.calls.plan_call(call, d.params, a.pyfunc, f"action {a.local} in a table", prefix)
        finally:
            self.st.stmt_depth -= 1
        for arg, given in zip(plan.args, ref.args or [], strict=False):
            if any(isinstance(x, tir.TableApply) for x in tir.walk(arg)):
                # p4c: "table invocation in action argument" (a bound argument runs inside the action)
                raise self.st.err(f"table invocation in an argument of action '{a.local}' in a table's action list",
                                  given.value if given.value is not None else ref)
        lines, _ = exprgen.call(plan)
        trec.dispatch[a.name] = (a.pyfunc, False)
        trec.bound_calls[a.name] = (plan, names)
        helpers = [ln for h in self.st.pending_defs[mark:] for ln in exprgen.statement(h)]
        del self.st.pending_defs[mark:]
        self.st.pop()
        fn = self.st.unique("D_" + a.name)
        self.st.out(f"def {fn}({', '.join(([ctxa] if ctxa else []) + names)}):")
        for line in helpers + lines:
            self.st.out("    " + line)
        return fn

    def _action_ref_expr(self, v):
        if isinstance(v, A.Call) and isinstance(v.func, A.Name):
            return v.func.name, v.args
        if isinstance(v, A.Name):
            return v.name, []
        raise self.st.err("expected an action call, e.g. drop() or set_port(1)", v)

    def _const_action_args(self, ainfo: controlplane.ActionInfo, args, node) -> tuple:
        d = ainfo.decl
        cps = [p for p in d.params if p.direction == ""]
        if ainfo.n_dir_params and len(args) == len(d.params):
            args = args[ainfo.n_dir_params:]
        if len(args) != len(cps):
            raise self.st.err(f"action '{ainfo.local}' expects {len(cps)} argument(s), got {len(args)}", node)
        bound = self.calls.bind_args(cps, args, node, f"action {ainfo.local}")
        out = []
        for p, a in zip(cps, bound, strict=True):
            t = self.decls.resolve_type(p.type)
            e = self.exprs.coerce(self.exprs.expr(a.value, t), t, a.value, f"argument '{p.name}' of {ainfo.local}")
            if e.const is None:
                raise self.st.err(f"argument '{p.name}' of {ainfo.local} must be a compile-time constant", a.value)
            v = e.const
            bt = T.strip_new(t)
            if isinstance(v, bool):
                v = int(v)
            if isinstance(bt, T.Bits) and bt.signed:
                v &= bt.mask
            out.append(v)
        return tuple(out)

    def _instance_ref(self, v, kinds, d, table_fqn, prop_annos=()):
        if isinstance(kinds, str):
            kinds = (kinds,)
        if isinstance(v, A.Name):
            s = self.st.lookup(v.name, v)
            if s.kind != "instance" or not isinstance(s.info, controlplane.ExternInstance) or s.info.kind not in kinds:
                raise self.st.err(f"'{v.name}' is not a {' or '.join(kinds)}", v)
            inst = s.info
        elif isinstance(v, A.CtorCall):
            t = self.decls.resolve_type(v.type)
            if not isinstance(t, T.ExternT) or t.name not in kinds:
                raise self.st.err(f"expected a {' or '.join(kinds)}", v)
            named = _anno_arg(list(prop_annos), "name")
            if isinstance(named, str) and named:
                # `@name("ap") implementation = action_profile(128);`: p4c names the instance by the
                # property's annotation, as written (no control prefix)
                fqn = named[1:] if named.startswith(".") else named
                inst = self.st.info.externs.get(fqn)
                if inst is None or inst.type_name != t.name:
                    inst = self.instances.bound_extern(t, v.args, fqn, v, [])   # p4c keeps none of them
                if table_fqn not in inst.tables:
                    inst.tables.append(table_fqn)
                return inst
            # p4c's P4Runtime serializer: an instance constructed in the property without a @name has no
            # control-plane name, so p4c-bm2-ss rejects it; p4exec always serves P4Runtime
            prop = {"direct_counter": "counters", "direct_meter": "meters"}.get(t.name, "implementation")
            raise self.st.err(f"Table '{table_fqn}' has an anonymous table property '{prop}' with no name "
                           "annotation, which is not supported by P4Runtime (declare the instance and name it)", v)
        else:
            raise self.st.err(f"expected a {' or '.join(kinds)}", v)
        if table_fqn not in inst.tables:
            if inst.kind in ("direct_counter", "direct_meter") and inst.tables:
                raise self.st.err(f"{inst.kind} '{inst.name}' is already used by table {inst.tables[0]}", v)
            inst.tables.append(table_fqn)
        return inst

    def keyset_items(self, ks, n) -> list:
        if isinstance(ks, A.KsTuple):
            items = ks.items
        elif isinstance(ks, A.ListExpr) and len(ks.items) == n:
            items = ks.items        # `{k}`: a list expression as the keyset, as p4c reads it (one item per key)
        elif isinstance(ks, A.KsDefault | A.KsDontCare) and n != 1:
            items = [A.KsDontCare(loc=ks.loc)] * n
        else:
            items = [ks]
        if len(items) != n:
            raise self.st.err(f"entry has {len(items)} key value(s), the table has {n} key field(s)", ks)
        return items

    def _table_entries(self, info: controlplane.TableInfo, prop, refs, d, props):
        keys = [k for k in info.keys if k.match_kind != "selector"]
        needs_prio = any(k.match_kind in ("ternary", "range", "optional") for k in keys)
        entries = prop.value
        explicit = [e for e in entries if e.priority is not None or A.anno(e.annos, "priority")]
        lpw = True
        if "largest_priority_wins" in props:
            lpw = bool(self.exprs.expr(props["largest_priority_wins"].value).const)
        delta = 1
        if "priority_delta" in props:
            delta = self.decls.const_int(props["priority_delta"].value, "priority_delta")
            if delta <= 0:
                raise self.st.err("priority_delta must be positive", props["priority_delta"].value)
        written = [e for e in entries if e.priority is not None]
        if prop.const and written:
            # p4c's frontend (EntryPriorities, v1.2.4.17): priorities only in a table whose entries are not const
            raise self.st.err("Entry: Table with 'const' entries cannot have priorities", written[0].keyset)
        if prop.const:
            explicit = []       # an @priority annotation there is BMv2's priority number (below)
        if written and info.keys and all(k.match_kind in ("exact", "lpm") for k in info.keys):
            # p4c's EntryPriorities: only a key with another match kind than exact and lpm orders entries
            where = props["key"].value[0] if props["key"].value else props["key"]
            raise self.st.err("Key key match type does not require priorities, but some are specified", where)
        n = len(entries)
        prev: int | None = None
        prios: list[int] = []
        for i, ent in enumerate(entries):
            items = self.keyset_items(ent.keyset, len(keys))
            match = []
            for k, it in zip(keys, items, strict=True):
                match.append(self._entry_match(k, it))
            aname = ent.action.name
            if aname not in refs:
                raise self.st.err(f"action '{aname}' is not in the actions list of table {d.name}", ent.action)
            s = refs[aname][0]
            args = self._const_action_args(s.info, ent.action.args or [], ent.action)
            prio = 0
            if prop.const and needs_prio:
                # p4c-bm2-ss writes a const entry's BMv2 priority as its position (1 first) or its @priority
                # annotation (p4c warns it "will be ignored", yet writes it); BMv2 prefers the smallest
                anno = _anno_arg(ent.annos, "priority")
                if anno is not None and (not isinstance(anno, int) or isinstance(anno, bool) or anno < 0):
                    raise self.st.err(f"@priority of an entry must be a non-negative integer, not {anno!r}", ent)
                if anno is not None:
                    self.st.info.warnings.append(
                        f"{ent.keyset.loc}: warning: @priority on a const entry is not P4_16 nor P4Runtime; "
                        f"p4c-bm2-ss writes it as the entry's BMv2 priority (smaller wins), and so does p4exec")
                prio = (1 << 24) - (int(anno) if anno is not None else i + 1)
            elif needs_prio or explicit:
                if ent.priority is not None:
                    prio = self.decls.const_int(ent.priority, "entry priority")
                elif A.anno(ent.annos, "priority") is not None:
                    prio = int(_anno_arg(ent.annos, "priority"))
                elif explicit:
                    if prev is None:
                        raise self.st.err("when some entries have priorities, the first one must have one", ent)
                    # P4_16 (and p4c's EntryPriorities): an entry without a priority follows the previous one by
                    # priority_delta, downwards when the largest priority wins
                    prio = prev - delta if lpw else prev + delta
                    if prio < 0:
                        raise self.st.err(f"entry priority {prio} would be negative (previous {prev}, priority_delta "
                                       f"{delta}): overflow in priority computation", ent)
                else:
                    prio = n - i
                prev = prio
                if explicit and prios and (prio > prios[-1] if lpw else prio < prios[-1]):
                    # p4c-bm2-ss 1.2.4.17 writes BMv2's entries in program order and ignores their priorities
                    self.st.info.warnings.append(
                        f"{ent.keyset.loc}: warning: entries out of priority order in table {info.name}: "
                        f"BMv2 (after p4c-bm2-ss) matches them in program order, p4exec by priority")
                prios.append(prio)
                if explicit and not lpw:
                    prio = (1 << 24) - prio
            info.entries.append(controlplane.ConstEntry(tuple(match), prio, s.info.name, args))

    def _entry_match(self, k: controlplane.KeyInfo, it):
        t = T.Bits(k.width)
        if isinstance(it, A.KsDontCare | A.KsDefault):
            if k.match_kind == "exact":
                raise self.st.err("don't-care '_' is not allowed for an exact key field", it)
            return None
        if isinstance(it, A.KsMask):
            v = self.exprs.coerce(self.exprs.expr(it.value, t), t, it.value, "entry key").const
            m = self.exprs.coerce(self.exprs.expr(it.mask, t), t, it.mask, "entry mask").const
            if v is None or m is None:
                raise self.st.err("entry key values must be compile-time constants", it)
            if k.match_kind == "ternary":
                return ("ternary", v & m, m)
            if k.match_kind == "lpm":
                plen = bin(m).count("1")
                if m != ((1 << plen) - 1) << (k.width - plen):
                    raise self.st.err("lpm mask must be a prefix mask", it)
                return ("lpm", v & m, plen)
            raise self.st.err(f"mask '&&&' not allowed for a {k.match_kind} key field", it)
        if isinstance(it, A.KsRange):
            if k.match_kind != "range":
                raise self.st.err(f"range '..' not allowed for a {k.match_kind} key field", it)
            lo = self.exprs.coerce(self.exprs.expr(it.lo, t), t, it.lo, "entry key").const
            hi = self.exprs.coerce(self.exprs.expr(it.hi, t), t, it.hi, "entry key").const
            return ("range", lo, hi)
        e = self.exprs.expr(it, t)
        if isinstance(T.strip_new(e.type), T.BoolT):
            e = self.exprs.lit(int(e.const), t) if e.const is not None else e
        else:
            e = self.exprs.coerce(e, T.Bits(k.width) if not isinstance(T.strip_new(e.type), T.EnumT | T.ErrorT)
                            else e.type, it, "entry key")
        if e.const is None:
            raise self.st.err("entry key values must be compile-time constants", it)
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
        raise self.st.err(f"unsupported match kind {mk} in entries", it)
