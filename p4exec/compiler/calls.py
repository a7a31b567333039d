"""Calls: argument binding to parameters, action/function calls, extern functions (hash, checksums,
clone/resubmit field lists); separate because call semantics (directions, copy-in/out) are their own job."""
from __future__ import annotations

from dataclasses import fields

from p4exec.compiler import controlplane, exprgen, tir
from p4exec.compiler import types as T
from p4exec.compiler.compile_state import CompileState
from p4exec.compiler.emit import pyfield
from p4exec.compiler.parts import DataTypePart, DeclarationPart, ExpressionPart, MethodPart, StatementPart
from p4exec.compiler.symbols import E, Sym, _loc, expr_text
from p4exec.errors import P4Unsupported
from p4exec.frontend import ast as A


class CallCompiler:
    """Calls: argument binding, action/function calls, extern functions and field lists."""

    decls: DeclarationPart
    exprs: ExpressionPart
    methods: MethodPart
    pytypes: DataTypePart
    statements: StatementPart

    def __init__(self, st: CompileState) -> None:
        self.st = st

    # ------------------------------------------------------------------ calls
    def bind_args(self, params: list, args: list[A.Arg], node, what: str) -> list:
        """Match arguments to parameters (positional or by name, defaults, @optional)."""
        named = [a for a in args if a.name is not None]
        if named and len(named) != len(args):
            raise self.st.err(f"{what}: mix of named and positional arguments", node)
        out: list = [None] * len(params)
        if named:
            pnames = [p.name for p in params]
            for a in args:
                if a.name not in pnames:
                    raise self.st.err(f"{what}: no parameter named '{a.name}'", a)
                out[pnames.index(a.name)] = a
        else:
            if len(args) > len(params):
                raise self.st.err(f"{what}: expected {len(params)} argument(s), got {len(args)}", node)
            for i, a in enumerate(args):
                out[i] = a
        for i, p in enumerate(params):
            if out[i] is None:
                if p.default is not None:
                    out[i] = A.Arg(p.default, loc=_loc(p.default))
                elif A.anno(p.annos, "optional") is not None:
                    out[i] = None
                else:
                    raise self.st.err(f"{what}: expected {len(params)} argument(s), got {len(args)}", node)
        return out

    def arg_for_param(self, p_type, direction: str, arg, node, what: str, action: bool = False) -> E:
        """The checked argument for one parameter; `action`: p4c accepts `_` for an action's parameter of any
        direction (a value nobody set; an inout's copy-out is dropped), elsewhere only for `out`."""
        if arg is None or arg.value is None:
            if direction == "out" or (action and arg is not None):
                return E(p_type, "None", extra="dontcare")
            raise self.st.err(f"{what}: don't-care argument for a non-out parameter", node)
        e = self.exprs.expr(arg.value, p_type)
        if direction in ("out", "inout"):
            if e.lv is None:
                raise self.st.err(f"{what}: argument for {direction} parameter must be an assignable l-value",
                               arg.value)
            if not T.same_type(T.strip_new(e.type), T.strip_new(p_type)) and not isinstance(p_type, T.TypeVar):
                raise self.st.err(f"{what}: argument of type {e.type} for {direction} parameter of type {p_type}",
                               arg.value)
            return e
        return self.exprs.coerce(e, p_type, arg.value, what)

    def x_Call(self, n):
        e = self.call(n)
        if isinstance(e.type, T.VoidT):
            raise self.st.err("a call that returns no value used as an expression", n)
        return e

    def call(self, n: A.Call, statement: bool = False) -> E:
        """A call; `statement` when it is a call statement (what p4c-bm2-ss restricts inside actions)."""
        f = self.exprs.expr(n.func)
        ex = f.extra
        if isinstance(ex, tuple) and ex[0] == "method":
            _, base, name, mnode = ex
            if statement:
                self.statements.action_effect(expr_text(n), n.loc)
            return self.methods.method_call(n, base, name)
        if isinstance(ex, Sym) and ex.kind == "action" and isinstance(n.func, A.Name) and not n.func.glob \
                and len(n.args) > len(ex.info.decl.params):
            # p4c resolves a call by name and argument count: `action hash() { hash(x, ...); }` calls
            # v1model's extern function, which the action's name only hides for a call that fits the action
            other = self.st.globals.get(n.func.name)
            if other is not None and other.kind == "extern_func":
                ex = other
        if isinstance(ex, Sym):
            if ex.kind == "action":
                if self.st.ctx is not None and self.st.ctx.kind == "parser":
                    raise self.st.err(f"action '{ex.info.local}' cannot be called in a parser (p4c: actions are "
                                   "invoked from controls only)", n)
                if statement:
                    self.statements.action_effect(expr_text(n), n.loc, callee=ex.info)
                return self.action_call(n, ex)
            if ex.kind == "extern_func":
                if statement:
                    self.statements.action_effect(expr_text(n), n.loc)
                return self.extern_func_call(n, ex)
            if ex.kind == "function":
                return self.function_call(n, ex)
        raise self.st.err("this is not something that can be called", n.func)

    def call_with_params(self, n, params, fcode: str, what: str, prefix_args: str = "",
                         ptypes=None, may_exit: bool = False, out_offset: int = 0,
                         copy_objects: bool = False) -> tuple[list[str], str]:
        """Compile a call to a generated function with P4 params; returns (lines, call-expression)."""
        return exprgen.call(self.plan_call(n, params, fcode, what, prefix_args, ptypes, may_exit, out_offset,
                                           copy_objects))

    def plan_call(self, n, params, fcode: str, what: str, prefix_args: str = "", ptypes=None,
                  may_exit: bool = False, out_offset: int = 0, copy_objects: bool = False,
                  unused: frozenset[str] = frozenset(), action: bool = False) -> tir.CallPlan:
        """Check a call's arguments against `params` and decide its copy-in/copy-out (tir.CallPlan).

        `unused`: parameters the callee's body never names. p4c-bm2-ss removes the copy-in and the (no-op)
        copy-out of such an in/inout/directionless scalar, so BMv2 never touches the argument: a run-time stack
        index out of range there is no fault (measured with BMv2; docs/p4exec-compiler.md "Run-time faults")."""
        bound = self.bind_args(params, n.args, n, what)
        args: list[tir.CallArg] = []
        outs: list[tir.Expr | None] = []
        for i, (p, a) in enumerate(zip(params, bound, strict=True)):
            pt = ptypes[i] if ptypes else self.decls.resolve_type(p.type)
            e = self.arg_for_param(pt, p.direction, a, n, f"{what}, argument {i + 1} ({p.name})", action)
            scalar = T.strip_new(pt).is_scalar
            dontcare = e.extra == "dontcare"
            if p.name in unused and scalar and p.direction in ("", "in", "inout") and _dead_access(e.node):
                args.append(tir.CallArg(tir.Const(pt, 0)))
                if p.direction == "inout":
                    outs.append(None)
                continue
            if p.direction in ("out", "inout") and scalar:
                args.append(tir.CallArg(tir.Const(pt, 0) if dontcare else e.node))
                outs.append(None if dontcare or e.lv is None else e.lv.node)
            elif dontcare:
                args.append(tir.CallArg(tir.Opaque(pt, self.pytypes.default_value(pt))))
            elif copy_objects and p.direction in ("out", "inout"):
                init = tir.Copy(e.type, e.node) if p.direction == "inout" else \
                    tir.Opaque(pt, self.pytypes.default_value(pt))
                args.append(tir.CallArg(init, temp=self.st.tmp(), target=e.node))
            else:
                args.append(tir.CallArg(e.node if (p.direction in ("out", "inout") or scalar)
                                        else self.exprs.objnode(e)))
        result = self.st.tmp() if outs else ""
        return tir.CallPlan(fcode, prefix_args, tuple(args), tuple(outs), result, out_offset, may_exit)

    def action_call(self, n, sym: Sym) -> E:
        info = sym.info
        d = info.decl
        if self.st.ctx is None or self.st.ctx.kind != "action":
            # p4c inlines an action called from another action before P4Info is written: only calls from an
            # apply block (or a function) keep the callee listed
            self.st.info.direct_actions.setdefault(info.name, info)
            self.st.info.action_events.append((self.st.pipeline_role, info.name, "use"))
        prefix = self.st.block_ctx.ctx_args if sym.const == "local" else ""
        used = _names_in(d.body)
        plan = self.plan_call(n, d.params, info.pyfunc, f"call of action {info.local}", prefix,
                              may_exit=True, copy_objects=info.copy_objects,
                              unused=frozenset(p.name for p in d.params if p.name not in used), action=True)
        return E(T.VOID, "", extra=plan)

    def function_call(self, n, sym: Sym) -> E:
        d = sym.decl
        ret = self.decls.resolve_type(d.proto.ret)
        if isinstance(ret, T.VoidT):
            plan = self.plan_call(n, d.proto.params, sym.py, f"call of function {d.name}")
            return E(T.VOID, "", extra=plan)
        # a value-returning function returns (value, scalar outs...)
        plan = self.plan_call(n, d.proto.params, sym.py, f"call of function {d.name}", out_offset=1)
        if not plan.outs:
            return E(ret, tir.Call(ret, plan))
        return E(ret, self.out_call_in_expression(ret, plan, n))

    def out_call_in_expression(self, ret: T.Type, plan: tir.CallPlan, n) -> tir.OutCall:
        """A call with out/inout arguments inside an expression. Python evaluates operands left to right as P4
        does, so the copy-out must happen when the call is evaluated: a nested helper (defined just before the
        statement, `nonlocal` for plain locals) takes the callee's result tuple, assigns the out values and
        returns the call's value: `x + f(x)` reads x before f's copy-out, `f(x) + x` after it."""
        if self.st.stmt_depth == 0:
            raise self.st.err("unsupported: a call with out/inout arguments outside a statement (table key, "
                           "select expression)", n, P4Unsupported)
        helper = self.st.unique("_co")
        self.st.pending_defs.append(tir.CallHelper(helper, plan))
        return tir.OutCall(ret, plan, helper)

    def field_values(self, e: E, node) -> list[tuple[tir.Expr, tir.FieldWidth]]:
        """Flatten a field list (list expression, struct, header, tuple or scalar) to (value, width) pairs: the
        value as unsigned bits, the width known or (varbit) the field's current length."""
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
                out.extend(self.field_values(E(ft, tir.Field(ft, e.node, f)), node))
            return out
        if isinstance(t, T.TupleT):
            out = []
            for i, ft in enumerate(t.items):
                out.extend(self.field_values(E(ft, tir.TupleItem(ft, e.node, i)), node))
            return out
        if isinstance(t, T.Bits):
            return [(tir.Truncated(T.Bits(t.width), e.node) if t.signed else e.node, t.width)]
        if isinstance(t, T.BoolT):
            return [(tir.Cast(T.Bits(1), e.node), 1)]
        if isinstance(t, T.EnumT) and t.base is not None:
            return [(e.node, t.base.width)]
        if isinstance(t, T.EnumT | T.ErrorT):
            # p4c-bm2-ss gives an error (its code) and a plain enum (its member's index) 32 bits
            return [(e.node, 32)]
        if isinstance(t, T.Varbit):
            return [(tir.VarbitValue(T.Bits(t.width), e.node), tir.VarbitLength(T.Bits(32), e.node))]
        if isinstance(t, T.InfIntT):
            raise self.st.err("an 'int' constant in a field list needs a width (e.g. 8w5)", node)
        raise self.st.err(f"values of type {e.type} cannot be hashed or sent", node)

    def packed_bytes(self, e: E, node, payload: bool = False) -> tir.Packed:
        """The BMv2 byte layout of a field list (MSB-first concatenation, zero pad to a byte)."""
        return tir.Packed(T.VOID, tuple(self.field_values(e, node)), payload)

    def packed_csum16(self, e: E, node) -> tir.Csum16 | None:
        """csum16 of a fixed-width field list on its integer value (tir.Csum16, see `_csum16_int`); None when
        a varbit makes the width dynamic (the bytes path handles that)."""
        fv = self.field_values(e, node)
        fixed = [(c, w) for c, w in fv if isinstance(w, int)]
        if len(fixed) != len(fv):
            return None
        return tir.Csum16(T.Bits(16), tuple(fixed))

    def hash_fn(self, algo: str, node=None) -> str:
        if algo not in ("crc32", "crc32_custom", "crc16", "crc16_custom", "identity", "csum16", "xor16"):
            raise self.st.err(f"unsupported: hash algorithm {algo} here", node, P4Unsupported)
        self.st.hash_algos.add(algo)
        return f"_hb_{algo}"

    def enum_member_name(self, e: E, enum_name: str, node) -> str:
        t = T.strip_new(e.type)
        if not (isinstance(t, T.EnumT) and t.name == enum_name) or e.const is None:
            raise self.st.err(f"expected a constant {enum_name} value", node)
        return t.members[e.const] if t.base is None else next(k for k, v in t.values.items() if v == e.const)

    def static_assert(self, n) -> E:
        """core.p4's `static_assert(check[, message])`: checked at compile time, true when it holds (so it can
        initialise a constant); nothing of it is left at run time."""
        if any(a.value is None or a.name is not None for a in n.args):
            raise self.st.err("static_assert: arguments must be given by position", n)
        check = self.exprs.expr(n.args[0].value, T.BOOL)
        if not isinstance(check.const, bool):
            raise self.st.err("static_assert: the condition must be a compile-time constant", n.args[0].value)
        message = "static assertion failed"
        if len(n.args) == 2:
            msg = self.exprs.expr(n.args[1].value, T.STRING)
            if not isinstance(msg.const, str):
                raise self.st.err("static_assert: the message must be a string literal", n.args[1].value)
            message = msg.const
        if not check.const:
            raise self.st.err(f"static_assert failed: {message}", n)
        return self.exprs.lit(True, T.BOOL)

    def extern_func_call(self, n, sym: Sym) -> E:
        protos = sym.decl
        name = protos[0].name
        nargs = len(n.args)
        cands = [p for p in protos if len(p.params) == nargs] or \
            [p for p in protos if sum(1 for q in p.params if q.default is None and
                                      A.anno(q.annos, "optional") is None) <= nargs <= len(p.params)]
        if not cands:
            counts = sorted({len(p.params) for p in protos})
            raise self.st.err(f"{name}: expected {' or '.join(map(str, counts))} argument(s), got {nargs}", n)
        proto = cands[0]
        if name == "static_assert":
            return self.static_assert(n)
        if self.st.ctx is None or self.st.ctx.kind != "parser":  # p4c's serializer looks at controls' calls only
            self.st.info.calls_extern_functions = True
        what = f"call of {name}"
        args = self.bind_args(proto.params, n.args, n, what)
        tparams = set(proto.type_params)
        if n.type_args and len(n.type_args) != len(proto.type_params):
            raise self.st.err(f"{name}: expected {len(proto.type_params)} type argument(s), got {len(n.type_args)}", n)
        targs = {tp: self.decls.resolve_type(ta) for tp, ta in zip(proto.type_params, n.type_args, strict=False)}

        def arg(i, t=None):
            p = proto.params[i]
            pt = t
            if pt is None:
                if isinstance(p.type, A.NamedType) and p.type.name in targs:
                    pt = targs[p.type.name]
                elif isinstance(p.type, A.NamedType) and p.type.name in tparams:
                    pt = T.TypeVar(p.type.name)
                else:
                    pt = self.decls.resolve_type(p.type)
            return self.arg_for_param(pt, p.direction, args[i], n, f"{what}, argument {i + 1} ({p.name})")

        if name == "mark_to_drop":
            if not proto.params:
                # backends/bmv2/simple_switch/simpleSwitch.cpp: "Expected 1 argument for mark_to_drop()".
                raise self.st.err("mark_to_drop() without arguments is not accepted by p4c-bm2-ss; write "
                               "mark_to_drop(standard_metadata)", n)
            return E(T.VOID, "", extra=tir.MarkToDrop(arg(0).node))
        if name == "verify":
            if self.st.block_ctx.kind != "parser":
                raise self.st.err("verify() can only be called in a parser", n)
            c = arg(0)
            err = arg(1)
            return E(T.VOID, "", extra=tir.Verify(c.node, err.node))
        if name == "hash":
            res = arg(0)
            rt = T.strip_new(res.type)
            if not isinstance(rt, T.Bits):
                raise self.st.err(f"hash result must be bit<N>, not {res.type}", n.args[0])
            algo = self.enum_member_name(arg(1), "HashAlgorithm", n.args[1].value)
            base = arg(2)
            data = arg(3)
            mx = arg(4)
            for x, i in ((base, 2), (mx, 4)):
                if not isinstance(T.strip_new(x.type), T.Bits | T.InfIntT):
                    raise self.st.err(f"hash argument {i + 1} must be a number", n.args[i].value)
            value: tir.Expr
            if algo == "random":
                value = tir.HashRandom(res.type, base.node, mx.node)
                self.st.rand_used = True
            else:
                hb = (algo == "csum16" and self.packed_csum16(data, n)) or \
                    tir.HashBytes(T.Bits(32), self.hash_fn(algo, n), self.packed_bytes(data, n))
                value = tir.Hash(res.type, hb, base.node, mx.node, mx.const)
            if res.lv is None:                 # `_` as the result: nothing observable happens
                return E(T.VOID, "", extra=tir.Pass())
            return E(T.VOID, "", extra=tir.Assign(res.lv.node, value))
        if name == "random":
            res = arg(0)
            rt = T.strip_new(res.type)
            if res.extra == "dontcare" and isinstance(rt, T.TypeVar) and n.args[1].value is not None:
                # `random(_, lo, hi)`: T comes from the bounds, as p4c infers it
                res = E(self.exprs.expr(n.args[1].value).type, "None", extra="dontcare")
                rt = T.strip_new(res.type)
            if not isinstance(rt, T.Bits):
                raise self.st.err(f"random result must be bit<N>, not {res.type}", n.args[0])
            lo = self.exprs.coerce(arg(1, res.type), res.type, n, what)
            hi = self.exprs.coerce(arg(2, res.type), res.type, n, what)
            self.st.rand_used = True
            if res.lv is None:                 # `_` as the result: nothing observable happens
                return E(T.VOID, "", extra=tir.Pass())
            return E(T.VOID, "", extra=tir.Assign(res.lv.node, tir.Random(res.type, lo.node, hi.node)))
        if name == "digest":
            arg(0)
            data = arg(1)
            dt = T.strip_new(data.type)
            if isinstance(dt, T.StructT | T.HeaderT):
                dname = dt.name
                fields = [(f, T.bit_width(ft) or 0) for f, ft in dt.fields.items()]
            elif isinstance(dt, T.ListT | T.TupleT) and all(T.bit_width(it) for it in dt.items):
                # p4c names a digest of a list/tuple itself, `digest_0`, `digest_1`, ... in the order of the
                # calls, and P4Info describes it as a tuple
                anon = self.st.anonymous_digests
                dname = anon.setdefault(id(n), f"digest_{len(anon)}")
                dt = T.TupleT(tuple(dt.items))
                fields = [(f"f{i}", T.bit_width(it) or 0) for i, it in enumerate(dt.items)]
            elif isinstance(dt, T.Bits):
                # a single bit<W>/int<W> value: named like a list's digest, a bitstring in P4Info
                anon = self.st.anonymous_digests
                dname = anon.setdefault(id(n), f"digest_{len(anon)}")
                fields = [("f0", dt.width)]
            else:
                raise self.st.err(f"digest data of type {data.type}: p4exec sends a struct, a header, a list of "
                                  "fields or one bit<W> value", n.args[1])
            if dname not in self.st.info.digests:
                self.st.info.digests[dname] = controlplane.DigestInfo(dname, fields, dt)
            return E(T.VOID, "", extra=tir.Digest(dname, tuple(v for v, _ in self.field_values(data, n))))
        if name in ("verify_checksum", "verify_checksum_with_payload", "update_checksum",
                    "update_checksum_with_payload"):
            c = self.exprs.coerce(arg(0), T.BOOL, n, what)
            data = arg(1)
            ck = arg(2)
            ckt = T.strip_new(ck.type)
            if not isinstance(ckt, T.Bits):
                raise self.st.err(f"checksum field must be bit<N>, not {ck.type}", n.args[2])
            algo = self.enum_member_name(arg(3), "HashAlgorithm", n.args[3].value)
            fast = algo == "csum16" and not name.endswith("with_payload") and self.packed_csum16(data, n)
            hv: tir.Expr
            if fast:
                hv = tir.Truncated(T.Bits(ckt.width), fast) if ckt.width < 16 else fast
            else:
                packed = self.packed_bytes(data, n, payload=name.endswith("with_payload"))
                hv = tir.Truncated(T.Bits(ckt.width), tir.HashBytes(T.Bits(32), self.hash_fn(algo, n), packed))
            if name.startswith("verify"):
                return E(T.VOID, "", extra=tir.VerifyChecksum(c.node, hv, ck.node))
            assert ck.lv is not None           # arg() checked the out argument
            return E(T.VOID, "", extra=tir.If(((c.node, (tir.Assign(ck.lv.node, hv),)),), None))
        if name == "clone":
            ct = self.enum_member_name(arg(0), "CloneType", n.args[0].value)
            self.check_pipeline_block(name, "ingress" if ct == "I2E" else "egress", n, f"CloneType.{ct}")
            s = arg(1)
            return E(T.VOID, "", extra=tir.Clone(ct == "E2E", s.node))
        if name in ("clone3", "clone_preserving_field_list"):
            ct = self.enum_member_name(arg(0), "CloneType", n.args[0].value)
            s = arg(1)
            fl = self.field_list_fn(arg(2), n, name == "clone_preserving_field_list")
            self.check_bmv2_converts(name, n)
            self.check_pipeline_block(name, "ingress" if ct == "I2E" else "egress", n, f"CloneType.{ct}")
            return E(T.VOID, "", extra=tir.Clone(ct == "E2E", s.node, fl))
        if name in ("resubmit", "resubmit_preserving_field_list", "recirculate",
                    "recirculate_preserving_field_list"):
            fl = self.field_list_fn(arg(0), n, name.endswith("field_list")) if proto.params else "_NOFL"
            self.check_bmv2_converts(name, n)
            self.check_pipeline_block(name, "ingress" if name.startswith("resubmit") else "egress", n)
            return E(T.VOID, "", extra=tir.Requeue(name.startswith("recirculate"), fl))
        if name == "truncate":
            ln = arg(0)
            return E(T.VOID, "", extra=tir.Truncate(ln.node))
        if name in ("assert", "assume"):
            c = self.exprs.coerce(arg(0), T.BOOL, n, what)
            return E(T.VOID, "", extra=tir.Assert(c.node, str(n.loc)))
        if name == "log_msg":
            msg = arg(0)
            if len(proto.params) > 1:
                data = arg(1)
                values = tuple(v for v, _ in self.field_values(data, n))
            else:
                values = ()
            return E(T.VOID, "", extra=tir.Log(msg.node, values))
        raise self.st.err(f"extern function '{name}' has no p4exec implementation", n, P4Unsupported)

    def check_bmv2_converts(self, name: str, n) -> None:
        """v1model.p4 still declares the deprecated clone3/resubmit/recirculate with a data argument, but
        p4c-bm2-ss (v1.2.4.17) has no BMv2 conversion for them and stops with "unknown extern function"."""
        if name in ("clone3", "resubmit", "recirculate"):
            raise self.st.err(f"{name}: unknown extern function (p4c-bm2-ss has no BMv2 conversion for the "
                           f"deprecated {name}; use {name.removesuffix('3')}_preserving_field_list)", n)

    def check_pipeline_block(self, name: str, block: str, n, what: str = "") -> None:
        """p4c-bm2-ss (backends/bmv2/simple_switch/simpleSwitch.cpp) converts clone(I2E)/resubmit only in
        ingress and clone(E2E)/recirculate only in egress, and reports an error elsewhere. Code outside the
        V1Switch blocks (a top-level action) is checked where p4c checks it: not at all here."""
        role = self.st.pipeline_role
        if role is not None and role != block:
            call = f"{name}({what}, ...)" if what else f"{name}(...)"
            raise self.st.err(f"{call} can only be called in {block} on p4c-bm2-ss / BMv2 (this is the {role} "
                           f"block)", n)

    def field_list_fn(self, e: E, node, by_index: bool) -> str:
        """A function copying preserved metadata fields into a new packet instance."""
        if by_index:
            if e.const is None:
                raise self.st.err("field list index must be a compile-time constant", node)
            idx = e.const
            key = ("idx", idx)
        else:
            key = ("data", id(e))
        paths: list[tuple[str, bool]] = []
        if by_index:
            mt = self.st.v1.get("M")
            if mt is not None:
                self._collect_field_list(mt, "m", idx, paths)
        else:
            self._data_paths(e, node, paths)
        name = f"_FL{len(self.st.field_lists)}"
        self.st.field_lists.append((name, key, paths))
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
        roots = self.st.ctx.roots if self.st.ctx is not None else {}
        for py, role in roots.items():
            if code == py or code.startswith(py + "."):
                out.append((role + code[len(py):], t.is_scalar))
                return
        raise self.st.err("preserved fields must be fields of the user metadata or standard_metadata "
                       "parameters", node)


def _names_in(node: object) -> set[str]:
    """Every identifier an AST subtree names (over-approximates uses: shadowing is ignored, which only keeps a
    copy that could have been dropped)."""
    found: set[str] = set()
    todo = [node]
    while todo:
        x = todo.pop()
        if isinstance(x, A.Name):
            found.add(x.name)
        if isinstance(x, list | tuple):
            todo.extend(x)
        elif isinstance(x, A.Node):
            todo.extend(getattr(x, f.name) for f in fields(x) if f.name != "loc")
    return found


def _dead_access(n: tir.Expr) -> bool:
    """A side-effect-free l-value through a run-time stack index: what p4c may drop when its value is unused."""
    dyn = False
    while isinstance(n, tir.Field | tir.Slice | tir.StackElem | tir.StackElemDyn):
        if isinstance(n, tir.StackElemDyn):
            if not _pure(n.index):
                return False
            dyn = True
        n = n.base
    return dyn and isinstance(n, tir.Name)


def _pure(n: tir.Expr) -> bool:
    """Reads only: names, constants, fields, stack elements, slices and operators over them."""
    if isinstance(n, tir.Name | tir.Const):
        return True
    if isinstance(n, tir.Field | tir.Slice | tir.StackElem):
        return _pure(n.base)
    if isinstance(n, tir.StackElemDyn):
        return _pure(n.base) and _pure(n.index)
    if isinstance(n, tir.Arith | tir.Bitwise | tir.ShiftLeft | tir.ShiftRight | tir.Cast | tir.Concat):
        return all(_pure(getattr(n, f.name)) for f in fields(n) if isinstance(getattr(n, f.name), tir.Expr))
    return False
