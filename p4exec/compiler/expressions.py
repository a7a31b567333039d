"""Expression checking for operands (the typed IR of tir.py; exprgen.py writes its Python): literals, coercion to an expected type, names,
members, indexing, slices, list/struct initializers and ?:; P4_16's typing rules for values live here."""
from __future__ import annotations

from collections.abc import Callable

from p4exec.compiler import exprgen, tir
from p4exec.compiler import types as T
from p4exec.compiler.compile_state import CompileState
from p4exec.compiler.parts import CallPart, DataTypePart, DeclarationPart, OperatorPart
from p4exec.compiler.symbols import LV, E, _loc, expr_text, wrap
from p4exec.errors import P4Unsupported, SourceLoc
from p4exec.frontend import ast as A
from p4exec.frontend.parser import name_loc


class ExpressionCompiler:
    """Expressions: literals, coercion, names/members/indexing, initializers and ?:."""

    calls: CallPart
    decls: DeclarationPart
    ops: OperatorPart
    pytypes: DataTypePart

    def __init__(self, st: CompileState) -> None:
        self.st = st
        self._handlers: dict[str, Callable[..., E]] = {}
        # AST nodes (by id) already checked into an E that must be reused, not evaluated again: the l-value of a
        # compound assignment, which P4 evaluates once
        self.pinned: dict[int, E] = {}
        self._last_loc: SourceLoc | None = None

    # ------------------------------------------------------------------ expressions
    def wrapcode(self, code: str, t: T.Bits) -> str:
        return exprgen.wrap(code, t)

    def lit(self, v, t) -> E:
        return E(t, tir.Const(t, v), v)

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
                    raise self.st.err(f"{what}: an 'int' value that is not a compile-time constant cannot be used "
                                   f"as {t}", node)
                return self.lit(wrap(e.const, bt), t)
            if isinstance(bt, T.InfIntT):
                return e
        if (isinstance(st, T.NewT) or isinstance(t, T.NewT)) and T.same_type(bs, bt):
            return E(t, e.node, e.const, e.lv, e.loc)
        if isinstance(bs, T.EnumT) and bs.base is not None and T.same_type(bs.base, t):
            # P4_16 (and p4c): a serializable enum converts implicitly to its underlying type; its value is the
            # number already
            return E(t, e.node, e.const)
        if isinstance(bs, T.ListT) and isinstance(bt, T.HeaderT | T.StructT | T.TupleT):
            items = e.extra
            ftypes = list(bt.items) if isinstance(bt, T.TupleT) else list(bt.fields.values())
            if len(items) != len(ftypes):
                raise self.st.err(f"{what}: {len(items)} values given for {t}, which has {len(ftypes)} fields", node)
            vals = [self.coerce(it, ft, node, what) for it, ft in zip(items, ftypes, strict=True)]
            if isinstance(bt, T.TupleT):
                return E(t, tir.Tuple(t, tuple(self.objnode(v) for v in vals)))
            return E(t, tir.Make(t, self.pytypes.pyclass(bt), tuple(self.objnode(v) for v in vals)))
        if isinstance(bs, T.StructInitT) and isinstance(bt, T.HeaderT | T.StructT):
            given = e.extra
            for k in given:
                if k not in bt.fields:
                    raise self.st.err(f"{what}: {t} has no field '{k}'", node)
            missing = [k for k in bt.fields if k not in given]
            if missing:
                raise self.st.err(f"{what}: no value for field(s) {', '.join(missing)} of {t}", node)
            vals = [self.coerce(given[k], ft, node, what) for k, ft in bt.fields.items()]
            return E(t, tir.Make(t, self.pytypes.pyclass(bt), tuple(self.objnode(v) for v in vals)))
        if isinstance(bs, T.Bits) and isinstance(bt, T.Bits):
            raise self.st.err(f"{what}: cannot convert {st} to {t} implicitly (an explicit cast is needed)", node)
        raise self.st.err(f"{what}: type {st} does not match expected type {t}", node)

    def objnode(self, e: E) -> tir.Expr:
        """The IR of a value to be stored: objects are copied (P4 has value semantics)."""
        if not T.strip_new(e.type).is_scalar and not isinstance(e.type, T.ListT | T.StructInitT):
            if isinstance(T.strip_new(e.type), T.TupleT):
                return e.node
            if e.lv is not None or e.extra == "ref":
                return tir.Copy(e.type, e.node)
        return e.node

    def objval(self, e: E) -> str:
        """Code for a value to be stored (see objnode)."""
        n = self.objnode(e)
        return e.code if n is e.node else exprgen.code(n)

    def handlers(self) -> dict[str, Callable[..., E]]:
        """AST class name -> the method compiling it (operators and calls live in their own parts)."""
        if not self._handlers:
            for part in (self, self.ops, self.calls):
                for name in dir(part):
                    if name.startswith("x_"):
                        self._handlers[name[2:]] = getattr(part, name)
        return self._handlers

    def expr(self, node, expected=None) -> E:
        if id(node) in self.pinned:
            return self.pinned[id(node)]
        if node is None:    # `_` where a value is needed: located at the expression checked just before it
            raise self.st.err("'_' (don't care) is not allowed here: only as an argument for an out parameter "
                              "or an action's parameter", self._last_loc)
        self._last_loc = _loc(node) or self._last_loc
        m = self.handlers().get(type(node).__name__)
        if m is None:
            raise self.st.err(f"unsupported expression {type(node).__name__}", node, P4Unsupported)
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
        return self.lit(n.value, T.STRING)

    def x_ErrorMember(self, n):
        if n.name not in self.st.info.errors:
            raise self.st.err(f"unknown error 'error.{n.name}'", name_loc(n.name, n.loc))
        i = self.st.info.errors.index(n.name)
        return self.lit(i, T.ERROR)

    def x_TypeMember(self, n):
        t = self.decls.resolve_type(n.type)
        bt = T.strip_new(t)
        if isinstance(bt, T.EnumT):
            if n.name not in bt.values:
                raise self.st.err(f"enum {bt.name} has no member '{n.name}'", name_loc(n.name, n.loc))
            return self.lit(bt.values[n.name], t)
        if isinstance(bt, T.ErrorT):
            return self.x_ErrorMember(A.ErrorMember(n.name, loc=n.loc))
        raise self.st.err(f"type {t} has no member '{n.name}'", name_loc(n.name, n.loc))

    def x_Name(self, n):
        s = self.st.lookup(n.name, n, n.glob)
        if s.kind == "const":
            if isinstance(s.info, tir.Make | tir.Tuple):    # a struct/tuple constant, built where it is used
                return E(s.type, s.info)
            return E(s.type, tir.Name(s.type, s.py), s.const)
        if s.kind in ("var", "param"):
            node = tir.Name(s.type, s.py)
            lv = None if s.direction == "in" or s.kind == "const" else LV(node)
            e = E(s.type, node, None, lv)
            if s.direction == "in" and not T.strip_new(s.type).is_scalar:
                e.extra = "ref"
            return e
        if s.kind == "table":
            t = T.TableT(s.info)
            return E(t, tir.Name(t, s.py), extra=s)
        if s.kind == "instance":
            return E(s.type, tir.Name(s.type, s.py), extra=s)
        if s.kind in ("action", "extern_func", "function", "block"):
            return E(T.VOID, tir.Name(T.VOID, s.py), extra=s)
        if s.kind == "state":
            raise self.st.err(f"parser state '{n.name}' used as a value", n)
        raise self.st.err(f"'{n.name}' cannot be used here", n)

    def x_Member(self, n):
        base = self.expr(n.expr)
        bt = T.strip_new(base.type)
        name = n.name
        if isinstance(bt, T.HeaderT | T.StructT | T.UnionT):
            if name in bt.fields:
                ft = bt.fields[name]
                if isinstance(bt, T.StructT) and tir.is_constant_aggregate(base.node):   # a field of a constant
                    item = base.node.items[list(bt.fields).index(name)]
                    return E(ft, item, item.value if isinstance(item, tir.Const) else None)
                node = tir.Field(ft, base.node, name)
                e = E(ft, node, None, LV(node) if base.lv is not None else None)
                if not T.strip_new(ft).is_scalar:
                    self.st.obj_paths.add(e.code)      # generation: objects used twice are bound to locals
                if base.extra == "ref":
                    e.extra = "ref"
                elif isinstance(bt, T.UnionT) and isinstance(base.extra, tuple) and base.extra[0] == "stack_next":
                    e.extra = ("stack_next_member", base.extra[1], name, bt)   # extract(us.next.m) advances us
                return e
            if name in ("isValid", "setValid", "setInvalid", "minSizeInBits", "minSizeInBytes", "maxSizeInBits",
                        "maxSizeInBytes"):
                return E(T.VOID, "", extra=("method", base, name, n))
            raise self.st.err(f"{base.type} has no field '{name}'", name_loc(name, n.loc))
        if isinstance(bt, T.StackT):
            if name == "size":
                return self.lit(bt.size, T.Bits(32))
            in_parser = self.st.ctx is not None and self.st.ctx.kind == "parser"
            if name in ("next", "last", "lastIndex") and not in_parser:
                # P4_16 8.18 and p4c's type checker: these depend on the parser's extraction position
                what = "'lastIndex'" if name == "lastIndex" else "'last', and 'next'"
                raise self.st.err(f"{expr_text(n)}: {what} for stacks can only be used in a parser", n)
            if name == "next":
                node = tir.StackNext(bt.elem, base.node)
                return E(bt.elem, node, None, LV(node) if base.lv is not None else None,
                         extra=("stack_next", base))
            if name == "last":
                node = tir.StackLast(bt.elem, base.node)
                return E(bt.elem, node, None, LV(node) if base.lv is not None else None,
                         extra=("stack_last", base))
            if name == "lastIndex":
                return E(T.Bits(32), tir.StackLastIndex(T.Bits(32), base.node))
            if name in ("push_front", "pop_front"):
                return E(T.VOID, "", extra=("method", base, name, n))
            raise self.st.err(f"header stack has no member '{name}'", n)
        if isinstance(bt, T.TableT):
            if name == "apply":
                return E(T.VOID, "", extra=("method", base, name, n))
            raise self.st.err(f"table has no member '{name}'", n)
        if isinstance(bt, T.ApplyResultT):
            if name in ("hit", "miss"):
                return E(T.BOOL, tir.ApplyResult(T.BOOL, base.node, name))
            if name == "action_run":
                t = T.ActionRunT(bt.table)
                return E(t, tir.ApplyResult(t, base.node, name))
            raise self.st.err(f"table apply result has no member '{name}' (hit, miss, action_run)", n)
        if isinstance(bt, T.ExternT | T.BlockT):
            return E(T.VOID, "", extra=("method", base, name, n))
        raise self.st.err(f"{base.type} has no member '{name}'", n)

    def x_Index(self, n):
        base = self.expr(n.expr)
        bt = T.strip_new(base.type)
        if isinstance(bt, T.StackT):
            idx = self.expr(n.index)
            if idx.const is not None:
                if not 0 <= idx.const < bt.size:
                    raise self.st.err(f"index {idx.const} out of range for header stack of size {bt.size}", n.index)
                node = tir.StackElem(bt.elem, base.node, idx.const)
            else:
                it = T.strip_new(idx.type)
                if isinstance(it, T.EnumT) and it.base is not None:
                    it = it.base    # p4c indexes by a serializable enum's number (its value is the number already)
                if not isinstance(it, T.Bits):
                    raise self.st.err(f"header stack index must be bit<N>, not {idx.type}", n.index)
                node = tir.StackElemDyn(bt.elem, base.node, idx.node)
            return E(bt.elem, node, None, LV(node) if base.lv is not None else None)
        if isinstance(bt, T.TupleT):
            i = self.decls.const_int(n.index, "tuple index")
            if not 0 <= i < len(bt.items):
                raise self.st.err(f"tuple index {i} out of range", n.index)
            if tir.is_constant_aggregate(base.node):    # an item of a constant tuple
                item = base.node.items[i]
                return E(bt.items[i], item, item.value if isinstance(item, tir.Const) else None)
            return E(bt.items[i], tir.TupleItem(bt.items[i], base.node, i))
        raise self.st.err(f"cannot index a value of type {base.type}", n)

    def x_Slice(self, n):
        base = self.expr(n.expr)
        bt = T.strip_new(base.type)
        hi = self.decls.const_int(n.hi, "slice bound")
        lo = self.decls.const_int(n.lo, "slice bound")
        if isinstance(bt, T.InfIntT) and base.const is not None:
            w = hi - lo + 1
            return self.lit((base.const >> lo) & ((1 << w) - 1), T.Bits(w))
        if not isinstance(bt, T.Bits):
            raise self.st.err(f"cannot slice a value of type {base.type}", n)
        if not (0 <= lo <= hi < bt.width):
            raise self.st.err(f"slice [{hi}:{lo}] out of range for {base.type}", n)
        w = hi - lo + 1
        t = T.Bits(w)
        if base.const is not None:
            return self.lit((base.const >> lo) & t.mask, t)
        node = tir.Slice(t, base.node, hi, lo)
        return E(t, node, None, LV(node) if base.lv is not None else None)

    def x_ListExpr(self, n, expected=None):
        bt = T.strip_new(expected) if expected is not None else None
        if isinstance(bt, T.HeaderT | T.StructT | T.TupleT):
            ftypes = list(bt.items) if isinstance(bt, T.TupleT) else list(bt.fields.values())
            if len(ftypes) == len(n.items):
                items = [self.expr(x, ft) for x, ft in zip(n.items, ftypes, strict=True)]
                lt = T.ListT([i.type for i in items])
                return self.coerce(E(lt, tir.Initializer(lt), extra=items), expected, n, "initializer")
        items = [self.expr(x) for x in n.items]
        lt = T.ListT([i.type for i in items])
        return E(lt, tir.Tuple(lt, tuple(i.node for i in items)), extra=items)

    def x_StructInit(self, n, expected=None):
        bt = T.strip_new(expected) if expected is not None else None
        fields = {}
        for k, v in n.fields:
            if k in fields:
                raise self.st.err(f"field '{k}' given twice", v)
            ft = bt.fields.get(k) if isinstance(bt, T.HeaderT | T.StructT) else None
            fields[k] = self.expr(v, ft)
        it = T.StructInitT({k: v.type for k, v in fields.items()})
        e = E(it, tir.Initializer(it), extra=fields)
        if isinstance(bt, T.HeaderT | T.StructT):
            return self.coerce(e, expected, n, "initializer")
        return e

    def x_CtorCall(self, n):
        raise self.st.err("constructor call is only allowed in an instantiation or table property", n)

    def x_Cond(self, n, expected=None):
        c = self.coerce(self.expr(n.cond), T.BOOL, n.cond, "condition of ?:")
        self.st.dead_code += c.const is False
        a = self.expr(n.then, expected)
        self.st.dead_code += (c.const is True) - (c.const is False)
        b = self.expr(n.other, expected)
        self.st.dead_code -= c.const is True
        a, b = self.ops.unify(a, b, n, "?:")
        if c.const is not None:
            return a if c.const else b
        if isinstance(a.type, T.InfIntT):
            if expected is not None and isinstance(T.strip_new(expected), T.Bits):
                a = self.coerce(a, expected, n)
                b = self.coerce(b, expected, n)
            else:
                raise self.st.err("the branches of ?: are both 'int': give them a width (e.g. 8w1)", n)
        return E(a.type, tir.Cond(a.type, c.node, a.node, b.node))
