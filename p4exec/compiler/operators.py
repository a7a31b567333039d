"""Operators and casts: operand unification, unary/binary arithmetic with P4_16 widths and wrap-around,
saturating ops, shifts, concatenation and explicit casts: the operator rules, apart from operands."""
from __future__ import annotations

from typing import cast

from p4exec.compiler import tir
from p4exec.compiler import types as T
from p4exec.compiler.compile_state import CompileState
from p4exec.compiler.parts import DeclarationPart, ExpressionPart
from p4exec.compiler.symbols import E, wrap
from p4exec.frontend import ast as A


class OperatorCompiler:
    """Operators: unification, unary/binary ops, shifts, concatenation and casts."""

    decls: DeclarationPart
    exprs: ExpressionPart

    def __init__(self, st: CompileState) -> None:
        self.st = st

    def unify(self, a: E, b: E, node, op) -> tuple[E, E]:
        ta, tb = T.strip_new(a.type), T.strip_new(b.type)
        if T.same_type(a.type, b.type):
            return a, b
        if isinstance(ta, T.InfIntT) and not isinstance(tb, T.InfIntT):
            return self.exprs.coerce(a, b.type, node, f"operand of '{op}'"), b
        if isinstance(tb, T.InfIntT) and not isinstance(ta, T.InfIntT):
            return a, self.exprs.coerce(b, a.type, node, f"operand of '{op}'")
        if T.same_type(ta, tb):
            return a, b
        if isinstance(ta, T.EnumT) and ta.base is not None and T.same_type(ta.base, b.type):
            return self.exprs.coerce(a, b.type, node, f"operand of '{op}'"), b
        if isinstance(tb, T.EnumT) and tb.base is not None and T.same_type(tb.base, a.type):
            return a, self.exprs.coerce(b, a.type, node, f"operand of '{op}'")
        raise self.st.err(f"operands of '{op}' have different types {a.type} and {b.type}", node)

    def x_Unary(self, n):
        e = self.exprs.expr(n.expr)
        t = T.strip_new(e.type)
        op = n.op
        if op == "!":
            e = self.exprs.coerce(e, T.BOOL, n.expr, "operand of '!'")
            if e.const is not None:
                return self.exprs.lit(not e.const, T.BOOL)
            return E(T.BOOL, tir.Not(T.BOOL, e.node))
        if isinstance(t, T.InfIntT):
            if e.const is None:
                raise self.st.err(f"operand of '{op}' must be a constant", n)
            if op == "-":
                return self.exprs.lit(-e.const, T.INFINT)
            if op == "+":
                return e
            raise self.st.err("operator '~' needs an operand with a width (bit<N> or int<N>), not 'int'", n)
        if not isinstance(t, T.Bits):
            raise self.st.err(f"operator '{op}' cannot be applied to {e.type}", n)
        if op == "+":
            return E(e.type, e.node, e.const)
        if e.const is not None:
            v = -e.const if op == "-" else ~e.const
            return self.exprs.lit(wrap(v, t), e.type)
        if op == "-":
            return E(e.type, tir.Neg(e.type, e.node))
        return E(e.type, tir.Complement(e.type, e.node))

    _CMP = {"==": "==", "!=": "!=", "<": "<", ">": ">", "<=": "<=", ">=": ">="}

    def x_Binary(self, n):
        op = n.op
        if op in ("&&", "||"):
            a = self.exprs.coerce(self.exprs.expr(n.left), T.BOOL, n.left, f"operand of '{op}'")
            b = self.exprs.coerce(self.exprs.expr(n.right), T.BOOL, n.right, f"operand of '{op}'")
            if a.const is not None and b.const is not None:
                return self.exprs.lit((a.const and b.const) if op == "&&" else (a.const or b.const), T.BOOL)
            return E(T.BOOL, tir.Logical(T.BOOL, op, a.node, b.node))
        a = self.exprs.expr(n.left)
        b = self.exprs.expr(n.right)
        if op in ("<<", ">>"):
            return self.shift(n, op, a, b)
        if op == "++":
            return self.concat(n, a, b)
        a, b = self.unify(a, b, n, op)
        t = T.strip_new(a.type)
        if op in ("==", "!="):
            if isinstance(t, T.HeaderT | T.StructT | T.UnionT | T.StackT):
                return E(T.BOOL, tir.ObjEq(T.BOOL, op == "!=", a.node, b.node))
            if isinstance(t, T.ListT | T.StructInitT | T.ExternT | T.BlockT | T.TableT | T.VoidT):
                raise self.st.err(f"cannot compare values of type {a.type}", n)
            if a.const is not None and b.const is not None:
                return self.exprs.lit((a.const == b.const) == (op == "=="), T.BOOL)
            return E(T.BOOL, tir.Compare(T.BOOL, op, a.node, b.node))
        if op in ("<", ">", "<=", ">="):
            if not isinstance(t, T.Bits | T.InfIntT):
                raise self.st.err(f"operator '{op}' needs numeric operands, not {a.type}", n)
            if a.const is not None and b.const is not None:
                return self.exprs.lit(eval(f"{a.const} {op} {b.const}"), T.BOOL)  # noqa: S307 - ints only
            return E(T.BOOL, tir.Compare(T.BOOL, op, a.node, b.node))
        if isinstance(t, T.InfIntT):
            if a.const is None or b.const is None:
                raise self.st.err(f"operands of '{op}' with type 'int' must be compile-time constants", n)
            x, y = a.const, b.const
            if op in ("/", "%") and y == 0:
                raise self.st.err("division by zero", n)
            if op in ("|+|", "|-|"):
                raise self.st.err(f"operator '{op}' needs operands with a width", n)
            v = {"+": lambda: x + y, "-": lambda: x - y, "*": lambda: x * y, "/": lambda: x // y,
                 "%": lambda: x % y, "&": lambda: x & y, "|": lambda: x | y, "^": lambda: x ^ y}[op]()
            return self.exprs.lit(v, T.INFINT)
        if not isinstance(t, T.Bits):
            raise self.st.err(f"operator '{op}' cannot be applied to {a.type}", n)
        rt = a.type
        if a.const is not None and b.const is not None:
            x, y = a.const, b.const
            if op in ("/", "%"):
                if y == 0:
                    raise self.st.err("division by zero", n)
                if t.signed:
                    raise self.st.err(f"operator '{op}' is not defined on signed values", n)
            v = {"+": lambda: x + y, "-": lambda: x - y, "*": lambda: x * y, "/": lambda: x // (y or 1),
                 "%": lambda: x % (y or 1), "&": lambda: x & y, "|": lambda: x | y, "^": lambda: x ^ y,
                 "|+|": lambda: self._sat(x + y, t), "|-|": lambda: self._sat(x - y, t)}[op]()
            return self.exprs.lit(wrap(v, t), rt)
        an, bn = a.node, b.node
        if op in ("+", "-", "*"):
            return E(rt, tir.Arith(rt, op, an, bn))
        if op in ("&", "|", "^"):
            return E(rt, tir.Bitwise(rt, op, an, bn))
        if op in ("/", "%"):
            if t.signed:
                raise self.st.err(f"operator '{op}' is not defined on signed values", n)
            if b.const is not None:
                if b.const == 0:
                    raise self.st.err("division by zero", n)
                return E(rt, tir.Div(rt, op, an, bn, checked=False))
            return E(rt, tir.Div(rt, op, an, bn, checked=True))      # a fault when the divisor is 0
        if op in ("|+|", "|-|"):
            return E(rt, tir.SatArith(rt, op, an, bn))
        raise self.st.err(f"unknown operator '{op}'", n)

    @staticmethod
    def _sat(v, t):
        lo = -(1 << (t.width - 1)) if t.signed else 0
        hi = (1 << (t.width - 1)) - 1 if t.signed else t.mask
        return max(lo, min(hi, v))

    BMV2_MAX_SHIFT_WIDTH = 8

    def shift(self, n, op, a, b):
        ta, tb = T.strip_new(a.type), b.type
        if isinstance(tb, T.EnumT) and tb.base is not None:
            tb = tb.base        # p4c shifts by a serializable enum's underlying number
        if isinstance(tb, T.Bits):
            if tb.signed:
                raise self.st.err(f"shift amount must be unsigned, not {b.type}", n.right)
        elif isinstance(tb, T.InfIntT):
            if b.const is None or b.const < 0:
                raise self.st.err("shift amount must be a non-negative constant or an unsigned value", n.right)
        else:
            # p4c (typeCheckExpr.cpp, since p4lang/p4c#5094): a `type` is not its base here, nor is an enum
            raise self.st.err(f"The right operand of shift must be either an expression of type bit<S> or a "
                              f"compile-time known value that is a non-negative integer, but is {b.type}", n.right)
        if not (isinstance(ta, T.InfIntT) and a.const is not None):
            # p4c's BMv2 back end (LowerExpressions::shift in backends/bmv2/common/lower.cpp) rejects a
            # shift whose amount has a bit type wider than 8 bits, a typed constant too (`x << 16w4`: measured
            # with p4c-bm2-ss 1.2.4.17; only a shift of two constants is folded away before), or an 'int'
            # constant above 256.
            # p4c's mid-end also removes a shift of 0 or by 0 (`16w0 >> f(x)`: the call stays, the shift goes)
            folded = (a.const is not None and b.const is not None) or a.const == 0 or b.const == 0
            if isinstance(tb, T.Bits) and not folded and tb.width > self.BMV2_MAX_SHIFT_WIDTH:
                raise self.st.err(f"shift amount of type {b.type}: p4c-bm2-ss limits a shift amount to "
                               f"{self.BMV2_MAX_SHIFT_WIDTH} bits (cast it, e.g. (bit<8>)n)", n.right)
            if isinstance(tb, T.InfIntT) and b.const is not None and b.const > 1 << self.BMV2_MAX_SHIFT_WIDTH:
                raise self.st.err(f"shift amount {b.const}: p4c-bm2-ss limits a constant shift amount to "
                               f"{1 << self.BMV2_MAX_SHIFT_WIDTH}", n.right)
        if isinstance(ta, T.InfIntT):
            if a.const is None or b.const is None:
                raise self.st.err("the left operand of a shift must have a width (bit<N>/int<N>) unless both "
                               "operands are constants", n)
            return self.exprs.lit(a.const << b.const if op == "<<" else a.const >> b.const, T.INFINT)
        if not isinstance(ta, T.Bits):
            raise self.st.err(f"cannot shift a value of type {a.type}", n)
        if a.const is not None and b.const is not None:
            v = (a.const << b.const) if op == "<<" else (a.const >> b.const)
            return self.exprs.lit(wrap(v, ta), a.type)
        if op == ">>":
            return E(a.type, tir.ShiftRight(a.type, a.node, b.node, b.const))
        if b.const is not None and b.const >= ta.width:
            return self.exprs.lit(0, a.type)
        return E(a.type, tir.ShiftLeft(a.type, a.node, b.node, b.const))

    def concat(self, n, a, b):
        ta, tb = T.strip_new(a.type), T.strip_new(b.type)
        if not isinstance(ta, T.Bits) or not isinstance(tb, T.Bits):
            if isinstance(ta, T.InfIntT) or isinstance(tb, T.InfIntT):
                raise self.st.err("operands of '++' need a width (bit<N>/int<N>); cast the 'int' literal", n)
            raise self.st.err(f"operator '++' needs bit<N>/int<N> operands, not {a.type} and {b.type}", n)
        t = T.Bits(ta.width + tb.width, ta.signed)
        if a.const is not None and b.const is not None:
            return self.exprs.lit(wrap((a.const << tb.width) | (b.const & tb.mask), t), t)
        return E(t, tir.Concat(t, a.node, b.node))

    def x_Cast(self, n):
        t = self.decls.resolve_type(n.type)
        bt = T.strip_new(t)
        e = self.exprs.expr(n.expr, t)
        s = T.strip_new(e.type)
        if T.same_type(s, bt):
            return E(t, e.node, e.const)
        if isinstance(bt, T.Bits):
            if isinstance(s, T.InfIntT):
                if e.const is None:
                    raise self.st.err("cast of a non-constant 'int'", n)
                return self.exprs.lit(wrap(e.const, bt), t)
            if isinstance(s, T.BoolT):
                if bt.width != 1 or bt.signed:
                    raise self.st.err(f"cannot cast bool to {t} (only to bit<1>)", n)
                if e.const is not None:
                    return self.exprs.lit(int(e.const), t)
                return E(t, tir.Cast(t, e.node))
            if isinstance(s, T.Bits) and s.width != bt.width and s.signed != bt.signed:
                # p4c (TypeInference::canCastBetween): between bit<>/int<> types a cast may change the width or
                # the signedness, not both; write (int<16>)(bit<16>)x or (int<16>)(int<8>)x instead.
                raise self.st.err(f"cannot cast {e.type} to {t} directly: a cast changes either the width or the "
                               f"signedness, not both (p4c)", n)
            if isinstance(s, T.EnumT) and s.base is not None:
                s = s.base
            if isinstance(s, T.Bits):
                if e.const is not None:
                    return self.exprs.lit(wrap(e.const, bt), t)
                if not bt.signed and not s.signed and s.width <= bt.width:
                    return E(t, e.node)           # the same number: no conversion
                return E(t, tir.Cast(t, e.node))
        if isinstance(bt, T.BoolT):
            if isinstance(s, T.Bits) and s.width == 1 and not s.signed:
                if e.const is not None:
                    return self.exprs.lit(bool(e.const), T.BOOL)
                return E(t, tir.Cast(t, e.node))
            if isinstance(s, T.InfIntT) and e.const in (0, 1):
                return self.exprs.lit(bool(e.const), T.BOOL)
        if isinstance(bt, T.EnumT) and bt.base is not None:
            if isinstance(s, T.InfIntT) and e.const is not None:
                return self.exprs.lit(wrap(e.const, bt.base), t)
            if isinstance(s, T.Bits):
                # a cast node holding a checked type (resolve_type passes T.Type through)
                inner = self.x_Cast(A.Cast(cast(A.TypeRef, bt.base), n.expr, loc=n.loc)) if s != bt.base else e
                return E(t, inner.node, inner.const)
        if isinstance(bt, T.InfIntT) and e.const is not None:
            return self.exprs.lit(e.const, T.INFINT)
        if isinstance(bt, T.HeaderT | T.StructT | T.TupleT) and isinstance(s, T.ListT | T.StructInitT):
            return self.exprs.coerce(e, t, n, "cast")
        raise self.st.err(f"cannot cast {e.type} to {t}", n)
