"""The Python generator of the typed expression IR (tir.py): one node in, the Python expression out.

It knows only the IR and the checked types it carries; what an expression means was decided by the checker.
The runtime helpers named here (`_stk`, `_stk_next_p`, `_stack_last`, `_shl`, `_shl_signed`, `_sat_add_signed`,
`_fault`, `_Exit`) are defined by the generated module's prelude (blocks.py).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import cast

from p4exec.compiler import tir
from p4exec.compiler import types as T
from p4exec.compiler.emit import pyfield
from p4exec.compiler.faults import DIVISION_BY_ZERO, V1_ERRORS
from p4exec.compiler.layout import header_nbytes, header_pack_expr, header_unpack_lines


def literal(v) -> str:
    """A constant as Python: small and negative ints in decimal, others in hex."""
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, int):
        return repr(v) if -10 < v < 10 or v < 0 else hex(v)
    return repr(v)


def wrap(code: str, t: T.Bits) -> str:
    """`code` reduced to bit<W> (modulo 2^W) or int<W> (two's complement)."""
    if t.signed:
        h = 1 << (t.width - 1)
        return f"(((({code}) + {h:#x}) & {t.mask:#x}) - {h:#x})"
    return f"(({code}) & {t.mask:#x})"


def _bits(t: T.Type) -> T.Bits:
    return cast(T.Bits, T.strip_new(t))


def code(n: tir.Expr) -> str:
    """The Python expression computing `n`."""
    return _RENDER[type(n)](n)


def assign(lv: tir.Expr, val: str) -> list[str]:
    """Python statements storing the Python value `val` into the l-value `lv` (a slice writes back its bits)."""
    if not isinstance(lv, tir.Slice):
        return [f"{code(lv)} = {val}"]
    w = lv.hi - lv.lo + 1
    m = (1 << w) - 1
    bt = _bits(lv.base.type)
    clear = bt.mask ^ (m << lv.lo)
    newval = f"(({code(lv.base)} & {clear:#x}) | (({val}) << {lv.lo}))"
    if bt.signed:
        half = 1 << (bt.width - 1)
        newval = f"((({newval} & {bt.mask:#x}) ^ {half:#x}) - {half:#x})"
    return assign(lv.base, newval)


def statement(s: tir.Stmt) -> list[str]:
    """The Python lines of an IR statement."""
    if isinstance(s, tir.SetObject):
        return [f"{code(s.target)}._set({code(s.value)})"]
    if isinstance(s, tir.Assign):
        return assign(s.target, code(s.value))
    if isinstance(s, tir.CallStmt):
        return call(s.plan)[0] or ["pass"]
    if isinstance(s, tir.Local):
        return [f"{s.py} = {code(s.value)}"]
    if isinstance(s, tir.Return):
        return [_return(s)]
    if isinstance(s, tir.Exit):
        return ["raise _EXIT"]
    if isinstance(s, tir.Block):
        return [ln for x in s.body for ln in statement(x)]
    if isinstance(s, tir.If):
        return _if(s)
    if isinstance(s, tir.Switch):
        return _switch(s)
    if isinstance(s, tir.For):
        return _for(s)
    if isinstance(s, tir.ForRange):
        return [f"for {s.var} in range({code(s.lo)}, {code(s.hi)} + 1):"] + _body(s.body)
    if isinstance(s, tir.ForStack):
        return [f"for {s.item} in {code(s.stack)}.h:", f"    {s.var} = {s.item}._copy()"] + _body(s.body)
    if isinstance(s, tir.ForList):
        return [f"for {s.var} in ({''.join(code(i) + ', ' for i in s.items)}):"] + _body(s.body)
    if isinstance(s, tir.Break):
        return ["break"]
    if isinstance(s, tir.Continue):
        return ["continue"]
    if isinstance(s, tir.Eval):
        return [code(s.value)]
    if isinstance(s, tir.CallHelper):
        return call_in_expression(s.plan, s.helper)[0]
    if isinstance(s, tir.SetValidity):
        return [f"{code(x)}._v = False" for x in s.invalidate] + [f"{code(s.header)}._v = {s.valid}"]
    if isinstance(s, tir.StackShift):
        return [f"{code(s.stack)}.{s.op}({s.count})"]
    if isinstance(s, tir.ParserApply):
        # the sub-parser returns (outs..., offset); on a reject its outs travel on the _ParserErr and are copied
        # out before it unwinds further (BMv2 keeps a rejecting sub-parser's writes: docs/p4exec-compiler.md).
        # An error raised by an argument (`st.next` of a full stack) comes before the call: nothing to copy out
        lines, result = call(s.plan)
        if not s.plan.outs:
            return [f"off = {result}"]
        t = s.plan.result
        first = lines.index(next(ln for ln in lines if ln.startswith(f"{t} = ")))
        outs = lines[first + 1:]
        return lines[:first] + ["try:", "    " + lines[first], "except _ParserErr as _e:",
                                "    if not hasattr(_e, 'outs'): raise", f"    {t} = _e.outs",
                                *("    " + ln for ln in outs), "    raise"] + outs + [f"off = {result}[-1]"]
    if isinstance(s, tir.Emit):
        return _emit(s)
    if isinstance(s, tir.OutsOnExit):
        return ["try:"] + _body(s.body) + ["except _Exit as _e:", f"    _e.outs = ({''.join(o + ', ' for o in s.outs)})",
                                           "    raise"]
    if isinstance(s, tir.MarkToDrop):
        return [f"{code(s.sm)}.egress_spec = 511", f"{code(s.sm)}.mcast_grp = 0"]
    if isinstance(s, tir.Verify):
        return [f"if not {code(s.cond)}: raise _ParserErr({code(s.error)})"]
    if isinstance(s, tir.Assert):
        return [f"if not {code(s.cond)}: _assert_fail({s.where!r})"]
    if isinstance(s, tir.Clone):
        return [f"PK.clone = ({int(s.e2e)}, {code(s.session)}, {s.field_list or None})"]
    if isinstance(s, tir.Requeue):
        return [f"PK.{'recirc' if s.recirculate else 'resubmit'} = {s.field_list}"]
    if isinstance(s, tir.Truncate):
        return [f"PK.truncate = {code(s.length)}"]
    if isinstance(s, tir.VerifyChecksum):
        return [f"if {code(s.cond)} and {code(s.value)} != {code(s.field)}: PK.sm.checksum_error = 1"]
    if isinstance(s, tir.Digest):
        return [f"_digest({s.name!r}, {_values(s.values)})"]
    if isinstance(s, tir.Log):
        return [f"_log({code(s.msg)}, {_values(s.values)})"]
    if isinstance(s, tir.Extract):
        return _extract(s)
    if isinstance(s, tir.Advance):
        return [f"off = _advance(n, off, {code(s.bits)})"]
    return ["pass"]


def _parser_error(name: str) -> str:
    return f"raise _ParserErr({V1_ERRORS.index(name)})"


def _extract(s: tir.Extract) -> list[str]:
    """The header unpacked from one integer of its bytes (layout.py); `_h`/`_u`/`_L`/`_nb`/`_x` are the
    parser function's scratch names."""
    t = cast(T.HeaderT, T.strip_new(s.header.type))
    nbytes: int | str = t.width // 8
    lines = []
    if s.length is not None:
        lines += [f"_L = {code(s.length)}", f"if _L > {s.length_max}: {_parser_error('HeaderTooShort')}",
                  f"if _L & 7: {_parser_error('ParserInvalidArgument')}", f"_nb = ({t.width} + _L) >> 3"]
        nbytes = "_nb"
    if s.stack is not None:
        stk = code(s.stack)
        lines.append(f"if {stk}.nxt >= {stk}.size: {_parser_error('StackOutOfBounds')}")
        if s.member:
            lines += [f"_u = {stk}.h[{stk}.nxt]", f"{stk}.nxt += 1"]
            lines += [f"_u.{pyfield(f)}._v = False" for f in s.union_others]
            lines.append(f"_h = _u.{pyfield(s.member)}")
        else:
            lines += [f"_h = {stk}.h[{stk}.nxt]", f"{stk}.nxt += 1"]
        dst = "_h"
    else:
        dst = code(s.header)
        lines += [f"{code(x)}._v = False" for x in s.invalidate]
    lines.append(f"if off + {nbytes} > n: {_parser_error('PacketTooShort')}")
    if nbytes:
        lines.append(f"_x = int.from_bytes(data[off:off + {nbytes}], 'big')")
        lines.extend(header_unpack_lines(t, dst, "_x", "_L" if s.length is not None else None))
    return lines + [f"{dst}._v = True", f"off += {nbytes}"]


def _emit(s: tir.Emit) -> list[str]:
    t = cast(T.HeaderT, T.strip_new(s.header.type))
    src = s.tmp or code(s.header)
    line = f"if {src}._v: {code(s.out)}.append(({header_pack_expr(t, src)}).to_bytes({header_nbytes(t, src)}, 'big'))"
    return [f"{s.tmp} = {code(s.header)}", line] if s.tmp else [line]


def _body(stmts: tuple[tir.Stmt, ...]) -> list[str]:
    """An indented Python suite (`pass` when the statements write nothing)."""
    lines = [ln for x in stmts for ln in statement(x)] or ["pass"]
    return ["    " + ln for ln in lines]


def _if(s: tir.If) -> list[str]:
    lines: list[str] = []
    for i, (cond, body) in enumerate(s.arms):
        lines.append(f"{'elif' if i else 'if'} {code(cond)}:")
        lines.extend(_body(body))
    if s.other is not None:
        lines.append("else:")
        lines.extend(_body(s.other))
    return lines


def _switch(s: tir.Switch) -> list[str]:
    """The value once into a temp, then an if/elif chain over the arms; the default is the `else`."""
    lines = [f"{s.tmp} = {code(s.value)}"]
    for i, arm in enumerate(s.arms):
        cond = " or ".join(f"{s.tmp} == {code(x)}" for x in arm.labels)
        lines.append(f"{'elif' if i else 'if'} {cond}:")
        lines.extend(_body(arm.body))
    if s.default is not None:
        lines.append("else:" if s.arms else "if True:")
        lines.extend(_body(s.default))
    return lines


def _for(s: tir.For) -> list[str]:
    """A C-style loop as `while`; with updates, a first-iteration flag skips them before the first test."""
    if not s.updates:
        return [f"while {code(s.cond) if s.cond is not None else 'True'}:"] + _body(s.body)
    lines = [f"{s.first} = True", "while True:", f"    if {s.first}:", f"        {s.first} = False", "    else:"]
    lines.extend("    " + ln for ln in _body(s.updates))
    if s.cond is not None:
        lines += [f"    if not {code(s.cond)}:", "        break"]
    return lines + _body(s.body)


def _return(s: tir.Return) -> str:
    """A function's value comes first; then the scalar out parameters, for the caller's copy-out."""
    outs = "".join(o + ", " for o in s.outs)
    if s.value is not None:
        return f"return ({code(s.value)}, {outs})" if s.outs else f"return {code(s.value)}"
    return f"return ({outs})" if s.outs else "return"


def call(plan: tir.CallPlan) -> tuple[list[str], str]:
    """The statements of a call (copy-in, call, copy-out) and the Python expression of its result."""
    pre = [f"{a.temp} = {code(a.value)}" for a in plan.args if a.temp]
    post = [f"{code(a.target)}._set({a.temp})" for a in plan.args if a.temp and a.target is not None]
    codes = [a.temp or code(a.value) for a in plan.args]
    call_code = f"{plan.func}({', '.join(([plan.prefix_args] if plan.prefix_args else []) + codes)})"
    t = plan.result

    def copy_out() -> list[str]:
        lines: list[str] = []
        for i, lv in enumerate(plan.outs):
            if lv is not None:
                lines.extend(assign(lv, f"{t}[{i + plan.out_offset}]"))
        return lines

    if post:
        lines = pre + ["try:", f"    _t_obj = {call_code}", "finally:"] + ["    " + ln for ln in post]
        if plan.outs:
            lines.append(f"{t} = _t_obj")
            lines.extend(copy_out())
        return lines, "_t_obj"
    if plan.outs:
        outs = copy_out()
        if plan.may_exit:
            lines = ["try:", f"    {t} = {call_code}", "except _Exit as _e:", f"    {t} = _e.outs"]
            lines += ["    " + ln for ln in outs] + ["    raise"]
        else:
            lines = [f"{t} = {call_code}"]
        return lines + outs, t
    return [call_code], call_code


def call_in_expression(plan: tir.CallPlan, helper: str) -> tuple[list[str], str]:
    """A value-returning call with out/inout arguments inside an expression: the definition of `helper`, which
    takes the callee's result tuple, copies the outs and returns the value, and the expression calling it. The
    copy-out thus happens when Python evaluates the call, left to right among the operands, as P4 orders it;
    plain locals assigned by the copy-out are `nonlocal` in the helper."""
    lines, _ = call(tir.CallPlan(plan.func, plan.prefix_args, plan.args, plan.outs, "_r", plan.out_offset,
                                 plan.may_exit))
    first, body = lines[0], lines[1:]
    call_code = first.split(" = ", 1)[1]
    roots = sorted({root for lv in plan.outs if lv is not None and (root := _local_root(lv))})
    defs = [f"def {helper}(_r):"]
    if roots:
        defs.append(f"    nonlocal {', '.join(roots)}")
    defs += ["    " + ln for ln in body] + ["    return _r[0]"]
    return defs, f"{helper}({call_code})"


def _local_root(lv: tir.Expr) -> str | None:
    """The Python variable an assignment to `lv` rebinds (a name, or a name under slices), else None."""
    while isinstance(lv, tir.Slice):
        lv = lv.base
    return lv.py if isinstance(lv, tir.Name) and lv.py.isidentifier() else None


def _call(n: tir.Call) -> str:
    return call(n.plan)[1]


def _out_call(n: tir.OutCall) -> str:
    return call_in_expression(n.plan, n.helper)[1]


def _table_apply(n: tir.TableApply) -> str:
    return f"{n.func}({n.ctx_args})"


_EXTERN_METHODS = {
    ("counter", "count"): "{r}.count({0}, PK.pkt_len)",
    ("meter", "execute_meter"): "{r}.execute({0}, PK.pkt_len, PK.now)",
    ("register", "read"): "{r}.dp_read({0})",
    ("register", "write"): "{r}.dp_write({0}, {1})",
}


def _extern_call(n: tir.ExternCall) -> str:
    """The runtime object's method (p4exec/runtime): counters count bytes and packets, meters read the clock."""
    return _EXTERN_METHODS[(n.extern, n.method)].format(*(code(a) for a in n.args), r=code(n.receiver))


def _lookahead(n: tir.Lookahead) -> str:
    raw = f"_lookahead(data, off, {n.width})"
    if n.cls:
        return f"{n.cls}._unpack({raw})"
    t = _bits(n.type)
    if t.signed:
        h = 1 << (n.width - 1)
        return f"(({raw} ^ {h:#x}) - {h:#x})"
    return raw


def _random(n: tir.Random) -> str:
    return f"_rand({code(n.lo)}, {code(n.hi)})"


def _values(values: tuple[tir.Expr, ...]) -> str:
    return "(" + "".join(code(v) + ", " for v in values) + ")"


def _truncated(n: tir.Truncated) -> str:
    return f"({code(n.operand)} & {_bits(n.type).mask:#x})"


def _varbit_value(n: tir.VarbitValue) -> str:
    return f"{code(n.operand)}[1]"


def _varbit_length(n: tir.VarbitLength) -> str:
    return f"{code(n.operand)}[0]"


def _packed(n: tir.Packed) -> str:
    fv = [(code(v), w if isinstance(w, int) else code(w)) for v, w in n.fields]
    tail = " + PK.payload" if n.payload else ""
    if any(isinstance(w, str) for _, w in fv):
        # a varbit field: shifts and the byte count depend on its current length
        parts = []
        for i, (c, _w) in enumerate(fv):
            after = [w for _, w in fv[i + 1:]]
            static = sum(w for w in after if isinstance(w, int))
            dyn = [w for w in after if isinstance(w, str)]
            shift_code = f"({' + '.join(dyn)} + {static})" if dyn else str(static)
            parts.append(f"({c} << {shift_code})")
        total_code = " + ".join(str(w) for _, w in fv)
        return f"(({' | '.join(parts)}) << (-({total_code}) % 8)).to_bytes(({total_code} + 7) >> 3, 'big'){tail}"
    widths = [cast(int, w) for _, w in fv]    # no varbit field: every width is known
    total = sum(widths)
    if total == 0:
        return "b''" + tail
    return f"({_concat_bits([c for c, _ in fv], widths, 8)}).to_bytes({(total + -total % 8) // 8}, 'big'){tail}"


def _concat_bits(values: list[str], widths: list[int], align: int) -> str:
    """The values side by side MSB first, zero bits appended to a multiple of `align` bits."""
    total = sum(widths)
    parts = []
    shift = total
    for c, w in zip(values, widths, strict=True):
        shift -= w
        parts.append(f"({c} << {shift})" if shift else c)
    pad = -total % align
    expr = " | ".join(parts)
    return f"(({expr}) << {pad})" if pad else expr


def _csum16(n: tir.Csum16) -> str:
    if not n.fields:
        return "0xffff"                     # csum16 of no bytes
    # zero bits to a whole byte, then a zero byte to a whole 16-bit word, as csum16 does
    return f"_csum16_int({_concat_bits([code(v) for v, _ in n.fields], [w for _, w in n.fields], 16)})"


def _hash_bytes(n: tir.HashBytes) -> str:
    return f"{n.func}({code(n.data)})"


def _hash(n: tir.Hash) -> str:
    hv, base, mask = code(n.value), code(n.base), _bits(n.type).mask
    if n.max_const is not None:
        return f"((({hv} % {n.max_const or 1}) + {base}) & {mask:#x})"
    return f"((({hv} % ({code(n.max)} or 1)) + {base}) & {mask:#x})"


def _hash_random(n: tir.HashRandom) -> str:
    b, m = code(n.base), code(n.max)
    return f"_rand({b}, {b} + {m} - 1) if {m} else {b}"


def _packet_length(n: tir.PacketLength) -> str:
    return "n"


def _opaque(n: tir.Opaque) -> str:
    return n.code


def _const(n: tir.Const) -> str:
    return literal(n.value)


def _name(n: tir.Name) -> str:
    return n.py


def _field(n: tir.Field) -> str:
    return f"{code(n.base)}.{pyfield(n.name)}"


def _stack_elem(n: tir.StackElem) -> str:
    return f"{code(n.base)}.h[{n.index}]"


def _stack_elem_dyn(n: tir.StackElemDyn) -> str:
    return f"_stk({code(n.base)}, {code(n.index)})"


def _stack_next(n: tir.StackNext) -> str:
    return f"_stk_next_p({code(n.base)})"


def _stack_last(n: tir.StackLast) -> str:
    return f"_stack_last({code(n.base)})"


def _stack_last_index(n: tir.StackLastIndex) -> str:
    return f"(({code(n.base)}.nxt - 1) & 0xffffffff)"


def _tuple_item(n: tir.TupleItem) -> str:
    return f"{code(n.base)}[{n.index}]"


def _apply_result(n: tir.ApplyResult) -> str:
    b = code(n.base)
    if n.member == "hit":
        return f"{b}.hit"
    if n.member == "miss":
        return f"(not {b}.hit)"
    return f"{b}.action.action"      # action_run


def _is_valid(n: tir.IsValid) -> str:
    return f"{code(n.base)}._valid()" if n.union else f"{code(n.base)}._v"


def _slice(n: tir.Slice) -> str:
    bt = _bits(n.base.type)
    b = code(n.base)
    mask = _bits(n.type).mask
    if n.lo == 0 and n.hi == bt.width - 1 and not bt.signed:
        return b
    if n.lo == 0:
        return f"({b} & {mask:#x})"
    if n.hi == bt.width - 1 and not bt.signed:
        return f"({b} >> {n.lo})"
    return f"(({b} >> {n.lo}) & {mask:#x})"


def _copy(n: tir.Copy) -> str:
    return f"{code(n.value)}._copy()"


def _tuple(n: tir.Tuple) -> str:
    return "(" + "".join(code(i) + ", " for i in n.items) + ")"


def _make(n: tir.Make) -> str:
    return f"{n.cls}._mk({', '.join(code(i) for i in n.items)})"


def _initializer(n: tir.Initializer) -> str:
    return ""          # only its coerced form (Make, Tuple) is ever generated


def _cond(n: tir.Cond) -> str:
    return f"({code(n.then)} if {code(n.cond)} else {code(n.other)})"


def _not(n: tir.Not) -> str:
    return f"(not {code(n.operand)})"


def _neg(n: tir.Neg) -> str:
    return wrap(f"-{code(n.operand)}", _bits(n.type))


def _complement(n: tir.Complement) -> str:
    t = _bits(n.type)
    if t.signed:
        return f"(~{code(n.operand)})"
    return f"({code(n.operand)} ^ {t.mask:#x})"


def _logical(n: tir.Logical) -> str:
    return f"({code(n.left)} {'and' if n.op == '&&' else 'or'} {code(n.right)})"


def _compare(n: tir.Compare) -> str:
    return f"({code(n.left)} {n.op} {code(n.right)})"


def _obj_eq(n: tir.ObjEq) -> str:
    c = f"{code(n.left)}._eq({code(n.right)})"
    return f"(not {c})" if n.negate else c


def _arith(n: tir.Arith) -> str:
    return wrap(f"{code(n.left)} {n.op} {code(n.right)}", _bits(n.type))


def _bitwise(n: tir.Bitwise) -> str:
    return f"({code(n.left)} {n.op} {code(n.right)})"


def _div(n: tir.Div) -> str:
    a, b = code(n.left), code(n.right)
    pyop = "//" if n.op == "/" else "%"
    if not n.checked:
        return f"({a} {pyop} {b})"
    return f"(({a} {pyop} {b}) if {b} else _fault({DIVISION_BY_ZERO!r}))"


def _sat_arith(n: tir.SatArith) -> str:
    t = _bits(n.type)
    a, b = code(n.left), code(n.right)
    if n.op == "|+|":
        return f"_sat_add_signed({a}, {b}, {t.width})" if t.signed else f"min({a} + {b}, {t.mask:#x})"
    return f"_sat_add_signed({a}, -{b}, {t.width})" if t.signed else f"max({a} - {b}, 0)"


def _shift_right(n: tir.ShiftRight) -> str:
    t = _bits(n.type)
    a = code(n.left)
    if n.amount is not None and n.amount >= t.width:
        return f"(-1 if {a} < 0 else 0)" if t.signed else "0"
    return f"({a} >> {code(n.right)})"


def _shift_left(n: tir.ShiftLeft) -> str:
    t = _bits(n.type)
    a = code(n.left)
    if n.amount is not None:
        return wrap(f"{a} << {n.amount}", t)
    if t.signed:
        return f"_shl_signed({a}, {code(n.right)}, {t.width})"
    return f"_shl({a}, {code(n.right)}, {t.width}, {t.mask:#x})"


def _concat(n: tir.Concat) -> str:
    tb = _bits(n.right.type)
    b = code(n.right)
    bc = f"({b} & {tb.mask:#x})" if tb.signed else b
    return f"(({code(n.left)} << {tb.width}) | {bc})"


def _cast(n: tir.Cast) -> str:
    to, frm = T.strip_new(n.type), T.strip_new(n.operand.type)
    e = code(n.operand)
    if isinstance(to, T.BoolT):
        return f"({e} != 0)"
    if isinstance(frm, T.BoolT):
        return f"(1 if {e} else 0)"
    bt = cast(T.Bits, to)
    if bt.signed:
        h = 1 << (bt.width - 1)
        return f"((({e} & {bt.mask:#x}) ^ {h:#x}) - {h:#x})"
    return f"({e} & {bt.mask:#x})"


def _as(n: tir.As) -> str:
    return code(n.operand)


_RENDER: dict[type, Callable] = {
    tir.Opaque: _opaque, tir.Const: _const, tir.Name: _name, tir.Field: _field, tir.StackElem: _stack_elem,
    tir.StackElemDyn: _stack_elem_dyn, tir.StackNext: _stack_next, tir.StackLast: _stack_last,
    tir.StackLastIndex: _stack_last_index, tir.TupleItem: _tuple_item, tir.ApplyResult: _apply_result,
    tir.Slice: _slice, tir.Copy: _copy, tir.Tuple: _tuple, tir.Make: _make, tir.Initializer: _initializer,
    tir.Cond: _cond, tir.Not: _not, tir.Neg: _neg, tir.Complement: _complement, tir.Logical: _logical,
    tir.Compare: _compare, tir.ObjEq: _obj_eq, tir.Arith: _arith, tir.Bitwise: _bitwise, tir.Div: _div,
    tir.SatArith: _sat_arith, tir.ShiftRight: _shift_right, tir.ShiftLeft: _shift_left, tir.Concat: _concat,
    tir.Cast: _cast, tir.As: _as, tir.IsValid: _is_valid, tir.Call: _call, tir.OutCall: _out_call,
    tir.TableApply: _table_apply, tir.ExternCall: _extern_call, tir.Lookahead: _lookahead,
    tir.PacketLength: _packet_length, tir.Random: _random, tir.Truncated: _truncated,
    tir.VarbitValue: _varbit_value, tir.VarbitLength: _varbit_length, tir.Packed: _packed, tir.Csum16: _csum16,
    tir.HashBytes: _hash_bytes, tir.Hash: _hash, tir.HashRandom: _hash_random,
}
