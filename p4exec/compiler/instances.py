"""Extern and block instantiations and constructor constants: turning `T(args) name;` into runtime objects
or bound sub-blocks."""
from __future__ import annotations

from p4exec.compiler import controlplane
from p4exec.compiler import types as T
from p4exec.compiler.compile_state import CompileState
from p4exec.compiler.parts import BlockPart, CallPart, DeclarationPart, ExpressionPart, TablePart
from p4exec.compiler.symbols import Sym, expr_text
from p4exec.errors import P4Unsupported
from p4exec.frontend import ast as A


class InstanceCompiler:
    """Extern instances, instantiations and constructor constants."""

    block: BlockPart
    calls: CallPart
    decls: DeclarationPart
    exprs: ExpressionPart
    tables: TablePart

    def __init__(self, st: CompileState) -> None:
        self.st = st

    def v1model_version(self) -> int | None:
        """The program's V1MODEL_VERSION, as v1model.p4 records it in `__v1model_version` (None: not v1model)."""
        sym = self.st.globals.get("__v1model_version")
        return sym.const if sym is not None else None

    # ------------------------------------------------------------------ instantiations
    def _ctor_const(self, arg, what, node):
        if arg is None or arg.value is None:
            raise self.st.err(f"{what}: missing argument", node)
        e = self.exprs.expr(arg.value)
        if e.const is None:
            raise self.st.err(f"{what} must be a compile-time constant", arg.value)
        return e

    def extern_instance(self, t: T.ExternT, args, fqn, node, annos) -> controlplane.ExternInstance:
        name = t.name
        decl = t.decl
        nargs = len(args)
        tps = list(getattr(decl, "type_params", None) or [])
        if len(t.args) != len(tps):
            # p4c: an extern's type parameters are not inferred from constructor arguments they do not appear
            # in; `register<bit<8>>` is right for the default V1MODEL_VERSION, `register<bit<8>, bit<10>>` for
            # 20200408 (and the other way round is an error).
            raise self.st.err(f"{name}: expected {len(tps)} type argument(s) ({', '.join(tps) or 'none'}), got "
                           f"{len(t.args)} (V1MODEL_VERSION {self.v1model_version()})", node)
        ctor = next((c for c in decl.ctors if len(c) == nargs), None)
        if ctor is None:
            counts = sorted({len(c) for c in decl.ctors})
            raise self.st.err(f"{name}: expected {' or '.join(map(str, counts)) or 0} constructor argument(s), got "
                           f"{nargs}", node)

        def enum_arg(i, enum):
            return self.calls.enum_member_name(self._ctor_const(args[i], f"{name} argument {i + 1}", node), enum,
                                         args[i].value)

        def int_arg(i):
            e = self._ctor_const(args[i], f"{name} argument {i + 1}", node)
            if not isinstance(e.const, int) or isinstance(e.const, bool):
                raise self.st.err(f"{name} argument {i + 1} must be an integer", args[i].value)
            return e.const

        def idx_width():
            if t.args:
                w = T.bit_width(t.args[0])
                return w or 32
            return 32

        if name == "counter":
            inst = controlplane.ExternInstance("counter", fqn, int_arg(0), enum_arg(1, "CounterType"), index_width=idx_width())
        elif name == "direct_counter":
            inst = controlplane.ExternInstance("direct_counter", fqn, 0, enum_arg(0, "CounterType"))
        elif name == "meter":
            inst = controlplane.ExternInstance("meter", fqn, int_arg(0), enum_arg(1, "MeterType"), index_width=idx_width())
        elif name == "direct_meter":
            inst = controlplane.ExternInstance("direct_meter", fqn, 0, enum_arg(0, "MeterType"))
        elif name == "register":
            if not t.args:
                raise self.st.err("register needs its cell type, e.g. register<bit<32>>(1024)", node)
            w = T.bit_width(t.args[0])
            if w is None or not isinstance(T.strip_new(t.args[0]), T.Bits):
                # p4c-bm2-ss: "Only registers with bit or int types are currently supported"
                raise self.st.err(f"register cells of type {t.args[0]} are not supported (p4c-bm2-ss: only bit<N> "
                               f"or int<N> cells)", node)
            if nargs and int_arg(0) == 0:
                raise self.st.err("register of size 0: p4c-bm2-ss reports 'direct registers are not supported in "
                               "bmv2'", node)
            iw = T.bit_width(t.args[1]) if len(t.args) > 1 else 32
            inst = controlplane.ExternInstance("register", fqn, int_arg(0) if nargs else 1, width=w, index_width=iw or 32)
        elif name == "action_profile":
            inst = controlplane.ExternInstance("action_profile", fqn, int_arg(0))
        elif name == "action_selector":
            algo = enum_arg(0, "HashAlgorithm")
            inst = controlplane.ExternInstance("action_selector", fqn, int_arg(1), algo=algo, output_width=int_arg(2))
        elif name in ("packet_in", "packet_out"):
            raise self.st.err(f"{name} cannot be instantiated", node)
        else:
            raise self.st.err(f"extern '{name}' has no p4exec implementation", node, P4Unsupported)
        inst.annos = annos
        inst.type_name = name
        if fqn in self.st.info.externs:
            raise self.st.err(f"duplicate instance name '{fqn}'", node)
        self.st.info.externs[fqn] = inst
        return inst

    def bound_extern(self, t: T.ExternT, args, fqn: str, node, annos) -> controlplane.ExternInstance:
        """An extern instance the generated module builds and binds, named ``fqn`` for the control plane."""
        inst = self.extern_instance(t, args, fqn, node, annos)
        py = self.st.unique("X_" + fqn)
        inst.pyobj = py
        self.st.bind.append((py, inst.kind, fqn))
        return inst

    def instantiation(self, d: A.Instantiation, prefix: str) -> None:
        t = self.decls.resolve_type(d.type)
        fqn = self.tables.fq(prefix, d.name, d.annos)
        if isinstance(t, T.ExternT):
            inst = self.bound_extern(t, d.args, fqn, d, d.annos)
            self.st.declare(d.name, Sym("instance", t, inst.pyobj, info=inst), d)
            return
        if isinstance(t, T.BlockT) and t.kind == "control":
            consts = self.ctor_consts(t.decl, d.args, d)
            saved_scopes = self.st.scopes
            self.st.scopes = []
            n_tables = len(self.st.info.tables)
            func = self.block.compile_control(t.decl, fqn, consts=consts)
            self.st.scopes = saved_scopes
            # info: whether the instance (with its sub-instances) has tables; one without may be applied again
            self.st.declare(d.name, Sym("instance", t, func, decl=t.decl, info=len(self.st.info.tables) > n_tables), d)
            return
        if isinstance(t, T.BlockT) and t.kind == "parser":
            if self.st.ctx is None or self.st.ctx.kind != "parser":
                raise self.st.err("a parser can only be instantiated inside a parser", d)
            consts = self.ctor_consts(t.decl, d.args, d)
            saved_scopes, saved_ctx = self.st.scopes, self.st.ctx
            func = self.block.compile_parser(t.decl, fqn, consts, sub=True)
            self.st.scopes, self.st.ctx = saved_scopes, saved_ctx
            self.st.declare(d.name, Sym("instance", t, func, decl=t.decl), d)
            return
        raise self.st.err(f"cannot instantiate {t}", d)

    # ------------------------------------------------------------------ controls
    def ctor_consts(self, decl, args, node) -> list[tuple[str, Sym]]:
        """Compile-time values of a parser's/control's constructor parameters."""
        params = decl.ctor_params or []
        if not params and args:
            raise self.st.err(f"{decl.name} takes no constructor arguments", node)
        bound = self.calls.bind_args(params, args, node, f"instantiation of {decl.name}")
        out = []
        for p, a in zip(params, bound, strict=True):
            t = self.decls.resolve_type(p.type)
            if a is None or a.value is None:
                raise self.st.err(f"missing constructor argument '{p.name}'", node)
            if isinstance(t, T.BlockT) and t.kind in ("control", "parser"):
                out.append((p.name, self._block_argument(t, p, a.value)))
                continue
            e = self.exprs.coerce(self.exprs.expr(a.value, t), t, a.value, f"constructor argument '{p.name}'")
            if e.const is None:
                raise self.st.err(f"constructor argument '{p.name}' must be a compile-time constant", a.value)
            out.append((p.name, Sym("const", t, e.code, e.const, decl=p)))
        return out

    def _block_argument(self, t: T.BlockT, p, value) -> Sym:
        """A control- or parser-typed constructor parameter: the argument names an instance declared before, and
        the parameter becomes that instance inside the block (one instance, shared, as in p4c)."""
        if isinstance(value, A.CtorCall):
            return self._anonymous_block(t, p, value)
        if not isinstance(value, A.Name):
            raise self.st.err(f"constructor argument '{p.name}' of type {t} must be an instance or a constructor "
                              f"call", value)
        sym = self.st.lookup(value.name, value)
        it = sym.type if sym.kind == "instance" else None
        if not (isinstance(it, T.BlockT) and it.kind == t.kind and self._same_signature(it.decl, t.decl)):
            raise self.st.err(f"constructor argument '{p.name}': {value.name} is not a {t.kind} of type {t}", value)
        return sym

    def _anonymous_block(self, t: T.BlockT, p, value: A.CtorCall) -> Sym:
        """`C(Sub())`: a constructor call as a control- or parser-typed constructor argument, an instance of its
        own. Its control-plane names would come from p4c's naming of anonymous instances, which p4exec does not
        follow yet: one that declares tables, externs or directly called actions is `unsupported`."""
        bt = self.decls.resolve_type(value.type)
        if not (isinstance(bt, T.BlockT) and bt.kind == t.kind and self._same_signature(bt.decl, t.decl)):
            raise self.st.err(f"constructor argument '{p.name}': {expr_text(value)} is not a {t.kind} of type {t}",
                              value)
        info = self.st.info
        before = (len(info.tables), len(info.externs), len(info.direct_actions), len(info.value_sets))
        consts = self.ctor_consts(bt.decl, value.args, value)
        saved_scopes, saved_ctx = self.st.scopes, self.st.ctx
        try:
            fqn = self.st.unique(f"{bt.decl.name}_{p.name}")
            if bt.kind == "control":
                func = self.block.compile_control(bt.decl, fqn, consts=consts)
            else:
                func = self.block.compile_parser(bt.decl, fqn, consts, sub=True)
        finally:
            self.st.scopes, self.st.ctx = saved_scopes, saved_ctx
        if (len(info.tables), len(info.externs), len(info.direct_actions), len(info.value_sets)) != before:
            raise self.st.err(f"unsupported: constructor argument '{p.name}' builds an anonymous {bt.kind} that "
                              "has tables, externs or directly called actions (name it in a declaration)", value,
                              P4Unsupported)
        return Sym("instance", bt, func, decl=bt.decl, info=False)

    def _same_signature(self, impl, typ) -> bool:
        """A parser/control declaration matches a parser/control type with the same parameters (directions and
        types; names may differ)."""
        if impl is typ:
            return True
        a, b = impl.params, typ.params
        return len(a) == len(b) and all(
            x.direction == y.direction
            and T.same_type(self.decls.resolve_type(x.type), self.decls.resolve_type(y.type))
            for x, y in zip(a, b, strict=True))
