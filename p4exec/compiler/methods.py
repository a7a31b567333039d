"""Method calls on headers, stacks and extern objects, and packet_in/packet_out (extract/emit with header
pack/unpack); kept apart from plain calls because they dispatch on the receiver's type."""
from __future__ import annotations

import re

from p4exec.compiler import controlplane, tir
from p4exec.compiler import types as T
from p4exec.compiler.compile_state import CompileState
from p4exec.compiler.parts import CallPart, DataTypePart, DeclarationPart, ExpressionPart
from p4exec.compiler.symbols import E, expr_text
from p4exec.errors import P4Unsupported
from p4exec.frontend import ast as A


class MethodCompiler:
    """Method calls: header/stack methods, extern object methods, packet_in/packet_out."""

    calls: CallPart
    decls: DeclarationPart
    exprs: ExpressionPart
    pytypes: DataTypePart

    def __init__(self, st: CompileState) -> None:
        self.st = st

    def method_call(self, n, base: E, name: str) -> E:
        bt = T.strip_new(base.type)
        nargs = len(n.args)

        def noargs():
            if nargs:
                raise self.st.err(f"{name}() takes no arguments", n)

        if isinstance(bt, T.HeaderT | T.UnionT):
            if name == "isValid":
                noargs()
                return E(T.BOOL, tir.IsValid(T.BOOL, base.node, isinstance(bt, T.UnionT)))
            if name in ("setValid", "setInvalid"):
                noargs()
                if base.lv is None:
                    raise self.st.err(f"cannot call {name}() on a read-only header", n)
                if isinstance(bt, T.UnionT):
                    raise self.st.err(f"{name}() is not defined on header unions", n)
                others = self.union_siblings(n.func.expr) if name == "setValid" else ()
                return E(T.VOID, "", extra=tir.SetValidity(base.node, name == "setValid", others))
            if name in ("minSizeInBits", "maxSizeInBits", "minSizeInBytes", "maxSizeInBytes"):
                noargs()
                w = T.bit_width(bt) or 0
                vb = T.varbit_field(bt)
                if vb is not None and name.startswith("max"):
                    w += vb[1]
                return self.exprs.lit(w if "Bits" in name else w // 8, T.INFINT)
        if isinstance(bt, T.StructT) and name in ("minSizeInBits", "minSizeInBytes"):
            w = T.bit_width(bt) or 0
            return self.exprs.lit(w if "Bits" in name else w // 8, T.INFINT)
        if isinstance(bt, T.StackT):
            if name in ("push_front", "pop_front"):
                if nargs != 1:
                    raise self.st.err(f"{name} takes 1 argument", n)
                k = self.decls.const_int(n.args[0].value, f"{name} count")
                if base.lv is None:
                    raise self.st.err(f"cannot call {name}() on a read-only stack", n)
                return E(T.VOID, "", extra=tir.StackShift(base.node, name, k))
        if isinstance(bt, T.TableT):
            noargs()
            info = bt.info
            info.applied = info.applied or not self.st.dead_code
            rt = T.ApplyResultT(info)
            return E(rt, tir.TableApply(rt, info.pyfunc, self.st.block_ctx.ctx_args))
        if isinstance(bt, T.BlockT) and isinstance(bt.decl, A.ParserDecl):
            if name != "apply":
                raise self.st.err(f"{bt.name} has no method '{name}'", n)
            if self.st.block_ctx.kind != "parser":
                raise self.st.err("a sub-parser can only be applied in a parser state", n)
            d = bt.decl
            params = d.params
            if not params or not isinstance(T.strip_new(self.decls.resolve_type(params[0].type)), T.ExternT):
                raise self.st.err(f"sub-parser {d.name} must take packet_in first", n)
            if len(n.args) != len(params):
                raise self.st.err(f"apply of {d.name}: expected {len(params)} argument(s), got {len(n.args)}", n)
            rest = A.Call(n.func, n.args[1:], loc=n.loc)
            # scalar out/inout arguments: the sub-parser returns (outs..., offset); copied out on a reject too
            # (p4c inlines the sub-parser with the arguments in place of its parameters, so BMv2 keeps its writes)
            plan = self.calls.plan_call(rest, params[1:], base.extra.py, f"apply of {d.name}", "data, off")
            return E(T.VOID, "", extra=tir.ParserApply(plan))
        if isinstance(bt, T.BlockT):
            if name != "apply":
                raise self.st.err(f"{bt.name} has no method '{name}'", n)
            d = bt.decl
            sym = base.extra
            plan = self.calls.plan_call(n, d.params, sym.py, f"apply of {bt.name}", may_exit=True)
            return E(T.VOID, "", extra=plan)
        if isinstance(bt, T.ExternT):
            return self.extern_method(n, base, bt, name)
        raise self.st.err(f"{base.type} has no method '{name}'", n)

    def note_direct_meter_read(self, base: E, r: E, target, n) -> None:
        """direct_meter.read(x) as p4c-bm2-ss compiles it: x becomes the meter's result target and the call
        disappears; BMv2 executes the meter and writes x whenever the meter's table hits an entry, wherever the
        read is (an action of that table, of another table, an apply block). All reads of one meter must name
        the same destination."""
        inst = getattr(base.extra, "info", None)
        if not isinstance(inst, controlplane.ExternInstance):
            return
        text = expr_text(target)
        if inst.read_target is not None:
            if text != inst.read_target:
                raise self.st.err(f"all meter operations must write to the same destination, however "
                               f"{inst.read_target} and {text} are different", n)
            return
        if r.lv is None or not re.match(r"(p_|L\.)", r.code):
            # an action parameter or local: p4c makes it a BMv2 scalar the action then copies; not modelled
            raise self.st.err(f"direct_meter.read() into '{text}', which is not a parameter or variable of the "
                           "control", target, P4Unsupported)
        inst.read_target = text
        inst.read_ctx = self.st.block_ctx.ctx_args
        self.st.out(f"def _DMW_{inst.pyobj}({inst.read_ctx + ', ' if inst.read_ctx else ''}_c):")
        for line in r.lv.assign("_c"):
            self.st.out("    " + line)
        self.st.native.meter_targets[inst.name] = r.lv.node
        self.st.dm_reads.append((inst, n))

    def union_siblings(self, hdr_node) -> tuple[tir.Expr, ...]:
        """The other members of the union a header expression `u.h` is a member of (none otherwise)."""
        if isinstance(hdr_node, A.Member):
            parent = self.exprs.expr(hdr_node.expr)
            pt = T.strip_new(parent.type)
            if isinstance(pt, T.UnionT):
                return tuple(tir.Field(ft, parent.node, f) for f, ft in pt.fields.items() if f != hdr_node.name)
        return ()

    def extern_method(self, n, base: E, et: T.ExternT, name: str) -> E:
        ename = et.name

        args = n.args
        what = f"{ename}.{name}"

        def expect(k):
            if len(args) != k:
                raise self.st.err(f"{what}: expected {k} argument(s), got {len(args)}", n)

        def val(i, t=None):
            if args[i].value is None:
                raise self.st.err(f"{what}: argument {i + 1} cannot be '_'", n)
            e = self.exprs.expr(args[i].value, t)
            return self.exprs.coerce(e, t, args[i].value, what) if t is not None else e

        def index(i):
            # p4c's v1model: the index parameter is `in bit<32>` (default V1MODEL_VERSION 20180101) or `in I`,
            # the extern's index type argument (>= 20200408). Either way P4_16 has no implicit width
            # conversion, so a bit<9> port number needs an explicit (bit<32>) cast.
            e = val(i)
            it = T.strip_new(e.type)
            want = T.Bits(32)
            tps = list(getattr(et.decl, "type_params", None) or [])
            if "I" in tps and len(et.args) == len(tps):
                want = et.args[tps.index("I")]
            if isinstance(it, T.InfIntT):
                return self.exprs.coerce(e, want, args[i].value, what)
            if not isinstance(it, T.Bits):
                raise self.st.err(f"{what}: index must be {want}, not {e.type}", args[i].value)
            if not T.same_type(it, T.strip_new(want)):
                raise self.st.err(f"{what}: index of type {e.type} where {want} is expected (p4c's v1model declares "
                               f"the index as {want}; no implicit width conversion, cast it)", args[i].value)
            return e

        def outarg(i):
            if args[i].value is None:
                return None
            e = self.exprs.expr(args[i].value)
            if e.lv is None:
                raise self.st.err(f"{what}: argument {i + 1} must be an assignable l-value", args[i].value)
            return e

        if ename == "packet_in":
            return self.packet_in_method(n, base, name)
        if ename == "packet_out":
            if name != "emit":
                raise self.st.err(f"packet_out has no method '{name}'", n)
            expect(1)
            return E(T.VOID, "", extra=tir.Block(tuple(self.emits(val(0), base.node))))
        if ename == "counter" and name == "count":
            expect(1)
            i = index(0)
            return E(T.VOID, "", extra=tir.Eval(tir.ExternCall(T.VOID, ename, name, base.node, (i.node,))))
        if ename == "direct_counter" and name == "count":
            expect(0)
            return E(T.VOID, "", extra=tir.Pass())      # the table's hit counts it
        if ename == "meter" and name == "execute_meter":
            expect(2)
            i = index(0)
            r = outarg(1)
            if r is None or r.lv is None:
                return E(T.VOID, "", extra=tir.Pass())
            return E(T.VOID, "", extra=tir.Assign(r.lv.node, tir.ExternCall(r.type, ename, name, base.node,
                                                                             (i.node,))))
        if ename == "direct_meter" and name == "read":
            expect(1)
            r = outarg(0)
            if r is not None and et.args and not T.same_type(T.strip_new(r.type), T.strip_new(et.args[0])):
                # direct_meter<T>.read(out T result): p4c's type checker unifies T with the declaration's
                raise self.st.err(f"{what}: result of type {r.type} for a direct_meter<{et.args[0]}>",
                                  args[0].value)
            if r is not None:
                self.note_direct_meter_read(base, r, args[0].value, n)
            return E(T.VOID, "", extra=tir.Pass())
        if ename == "register":
            cell = et.args[0] if et.args else T.Bits(32)
            if name == "read":
                if len(args) == 1:
                    raise self.st.err(f"{what}: v1model's register has only read(out T result, in index); "
                                   f"there is no value-returning read(index)", n)
                expect(2)
                r = outarg(0)
                i = index(1)
                if r is not None and not T.same_type(T.strip_new(r.type), T.strip_new(cell)):
                    raise self.st.err(f"{what}: result of type {r.type} for a register of {cell}", args[0].value)
                if r is None or r.lv is None:
                    return E(T.VOID, "", extra=tir.Pass())
                return E(T.VOID, "", extra=tir.Assign(r.lv.node, tir.ExternCall(r.type, ename, name, base.node,
                                                                                 (i.node,))))
            if name == "write":
                expect(2)
                i = index(0)
                v = val(1, cell)
                return E(T.VOID, "", extra=tir.Eval(tir.ExternCall(T.VOID, ename, name, base.node,
                                                                   (i.node, v.node))))
        raise self.st.err(f"{ename} has no method '{name}' in p4exec", n)

    # ------------------------------------------------------------------ packet_in / packet_out
    def packet_in_method(self, n, base, name) -> E:
        if self.st.block_ctx.kind != "parser":
            raise self.st.err("packet_in methods can only be used in a parser", n)
        args = n.args
        if name == "extract":
            if len(args) not in (1, 2):
                raise self.st.err("extract takes 1 or 2 arguments", n)
            if len(args) == 1 and args[0].value is None and len(n.type_args) == 1:
                # `extract<H>(_)`: p4c extracts into a temporary nobody reads, so the packet advances by H's
                # size (PacketTooShort when it is not there)
                ht = T.strip_new(self.decls.resolve_type(n.type_args[0]))
                if not isinstance(ht, T.HeaderT) or T.varbit_field(ht) is not None:
                    raise self.st.err(f"extract<{ht}>(_) needs a header type without varbit fields", n)
                return E(T.VOID, "", extra=tir.Advance(self.exprs.lit(ht.width, T.Bits(32)).node))
            target = self.exprs.expr(args[0].value)
            vlen = None
            if len(args) == 2:
                vlen = self.exprs.coerce(self.exprs.expr(args[1].value), T.Bits(32), args[1].value,
                                   "extract variableFieldSizeInBits")
            return E(T.VOID, "", extra=self.extract(target, args[0].value, vlen, n))
        if name == "lookahead":
            if len(n.type_args) != 1:
                raise self.st.err("lookahead needs one type argument, e.g. lookahead<bit<16>>()", n)
            t = self.decls.resolve_type(n.type_args[0])
            bt = T.strip_new(t)
            w = T.bit_width(bt)
            if w is None:
                raise self.st.err(f"cannot lookahead a value of type {t}", n)
            if isinstance(bt, T.Bits):
                return E(t, tir.Lookahead(t, w))
            if isinstance(bt, T.HeaderT | T.StructT):
                return E(t, tir.Lookahead(t, w, self.pytypes.pyclass(bt)))
            raise self.st.err(f"unsupported: lookahead of {t}", n, P4Unsupported)
        if name == "advance":
            if len(args) != 1:
                raise self.st.err("advance takes 1 argument", n)
            e = self.exprs.coerce(self.exprs.expr(args[0].value), T.Bits(32), args[0].value, "advance")
            return E(T.VOID, "", extra=tir.Advance(e.node))
        if name == "length":
            return E(T.Bits(32), tir.PacketLength(T.Bits(32)))
        raise self.st.err(f"packet_in has no method '{name}'", n)

    def extract(self, target: E, node, vlen: E | None = None, call=None) -> tir.Extract:
        """Check `extract(target[, bits])`: a writable header (a varbit one needs its size)."""
        t = T.strip_new(target.type)
        if not isinstance(t, T.HeaderT):
            raise self.st.err(f"extract needs a header, not {target.type}", node)
        if target.lv is None:
            raise self.st.err("extract target must be an assignable header", node)
        vb = T.varbit_field(t)
        if vb is None and vlen is not None:
            raise self.st.err(f"two-argument extract needs a header with a varbit field; {t} has none", call)
        if vb is not None and vlen is None:
            raise self.st.err(f"header {t} has a varbit field: extract it with extract(hdr, sizeInBits)", node)
        vmax = vb[1] if vb is not None else 0
        length = vlen.node if vlen is not None else None
        if isinstance(target.extra, tuple) and target.extra[0] == "stack_next":
            return tir.Extract(target.node, target.extra[1].node, length=length, length_max=vmax)
        if isinstance(target.extra, tuple) and target.extra[0] == "stack_next_member":
            _, stk_e, member, ut = target.extra
            return tir.Extract(target.node, stk_e.node, member, tuple(f for f in ut.fields if f != member),
                               length=length, length_max=vmax)
        if isinstance(target.extra, tuple) and target.extra[0] == "stack_last":
            raise self.st.err("cannot extract into .last", node)
        return tir.Extract(target.node, invalidate=self.union_siblings(node), length=length,
                           length_max=vmax)

    def emits(self, e: E, out: tir.Expr) -> list[tir.Stmt]:
        """packet_out.emit of a header, or of each header inside a struct, union or stack, in order."""
        t = T.strip_new(e.type)
        if isinstance(t, T.HeaderT):
            if e.lv is None and e.extra != "ref" and not e.code.replace(".", "").replace("_", "").isalnum():
                return [tir.Emit(e.node, out, self.st.tmp())]   # a computed header value: evaluated once
            return [tir.Emit(e.node, out)]
        if isinstance(t, T.StructT | T.UnionT):
            return [x for f, ft in t.fields.items() for x in self.emits(E(ft, tir.Field(ft, e.node, f), extra="ref"),
                                                                         out)]
        if isinstance(t, T.StackT):
            return [x for i in range(t.size) for x in self.emits(E(t.elem, tir.StackElem(t.elem, e.node, i),
                                                                   extra="ref"), out)]
        raise self.st.err(f"emit needs a header, header stack, header union or struct of those, not {e.type}", e.loc)
