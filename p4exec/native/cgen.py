"""C from the typed IR: the v1model blocks of one compiled program as C functions over C structs.

Reads only `CompiledProgram.native` (the frames the compiler recorded, p4exec/compiler/nrecord.py) and the IR
nodes in it. Every value is a `uint64_t` holding a bit<W> (W <= 64) reduced modulo 2^W, as the Python generator
keeps Python ints reduced; what this generator cannot express yet raises `Unsupported` with the reason, and the
loader then keeps the Python pipeline (never a wrong packet).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, fields, replace
from importlib import resources
from typing import Any

from p4exec.compiler import tir
from p4exec.compiler import types as T
from p4exec.compiler.faults import V1_ERRORS
from p4exec.compiler.nrecord import ActionRec, ControlRec, FunctionRec, NativeRecord, ParserRec, TableRec
from p4exec.native import wide


class Unsupported(Exception):
    """A construct the C generator does not handle yet (the Python pipeline runs the program instead)."""


HASH_FUNCS = {"crc16": "p4n_crc16", "crc32": "p4n_crc32", "csum16": "p4n_csum16", "cksum16": "p4n_csum16",
              "xor16": "p4n_xor16", "identity": "p4n_identity",
              # the generated Python's `_hb_crc16_custom`/`_hb_crc32_custom` run BMv2's default parameters, which
              # are crc16's and crc32's (p4exec/runtime/hashes.py; tests/native/test_hash_c.py checks it)
              "crc16_custom": "p4n_crc16", "crc32_custom": "p4n_crc32"}
# hashes over a field list and then the packet's payload (`*_with_payload`): the two parts streamed in C
PAYLOAD_HASH_FUNCS = {"csum16": "p4n_csum16_2", "cksum16": "p4n_csum16_2", "crc16": "p4n_crc16_2",
                      "crc16_custom": "p4n_crc16_2", "crc32": "p4n_crc32_2", "crc32_custom": "p4n_crc32_2",
                      "xor16": "p4n_xor16_2"}


@dataclass
class Extern:
    """A runtime object the C code reaches through the instance struct."""

    kind: str            # register / counter / table
    name: str            # runtime object name
    py: str              # generated Python name
    index: int           # slot in the instance's array of that kind


@dataclass
class CProgram:
    source: str
    cdef: str
    registers: list[Extern] = field(default_factory=list)
    counters: list[Extern] = field(default_factory=list)
    tables: list[tuple[Extern, TableRec]] = field(default_factory=list)
    digests: list[str] = field(default_factory=list)        # digest names, by the index the C code passes back
    log_msgs: list[str] = field(default_factory=list)
    value_sets: list[str] = field(default_factory=list)     # value set names, by the index C passes back
    meters: list[str] = field(default_factory=list)         # meter names, by the index C passes back
    uses_payload: bool = False  # job_t.pay must point at the payload before p4n_egress / p4n_finish
    arg_widths: dict[str, list[int]] = field(default_factory=dict)   # action name -> its data's widths
    hcap: int = 1024            # bytes the deparser may write before the payload (all headers valid)


HEADER_BYTES_MAX = 3072     # below the per-frame output buffer (pipeline.OUT_CAP)


C_KEYWORDS = frozenset(
    "auto break case char const continue default do double else enum extern float for goto if inline int long "
    "register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while "
    "asm typeof bool true false _Bool".split())


def _cf(name: str) -> str:
    """A P4 field's C member name (a C keyword, e.g. `short`, gets a trailing underscore)."""
    return name + "_" if name in C_KEYWORDS else name


def _mask(w: int) -> str:
    return "0xFFFFFFFFFFFFFFFFULL" if w >= 64 else f"0x{(1 << w) - 1:X}ULL"


def _width(t: T.Type) -> int:
    b = T.strip_new(t)
    if isinstance(b, T.BoolT):
        return 1
    if isinstance(b, T.Bits):
        if b.width > 64:
            raise Unsupported(f"{b} wider than 64 bits")
        return b.width
    if isinstance(b, T.EnumT) and b.base is not None:
        return _width(b.base)
    if isinstance(b, T.EnumT | T.ErrorT):
        return 32
    raise Unsupported(f"scalar of type {t}")


def _signed(t: T.Type) -> bool:
    b = T.strip_new(t)
    return isinstance(b, T.Bits) and b.signed


def _sx(v: str, t: T.Type) -> str:
    """The value as a signed 64-bit number: int<W> is held as its W-bit two's complement pattern."""
    if not _signed(t):
        return v
    return f"p4n_sext({v}, {_width(t)})"


def _is_obj(t: T.Type) -> bool:
    return isinstance(T.strip_new(t), T.HeaderT | T.StructT | T.UnionT | T.StackT)


def _ww(t: T.Type) -> int | None:
    """The width of a wide (64 < W <= 128) unsigned value, None for a narrow one; Unsupported otherwise."""
    try:
        return wide.width(t)
    except wide.WideUnsupported as e:
        raise Unsupported(str(e)) from None


def _vw(t: T.Type) -> int:
    """The width of a scalar the C holds as u64 or (wide) u128."""
    return _ww(t) or _width(t)


def _vt(t: T.Type) -> str:
    """The C type of a scalar value: u128 for a wide one, else u64."""
    if isinstance(T.strip_new(t), T.Varbit):
        raise Unsupported(f"{t} as a scalar value")
    return "u128" if _ww(t) else "u64"


def _vmask(w: int) -> str:
    return wide.mask(w) if w > 64 else _mask(w)


_PATHS = (tir.Name, tir.Field, tir.StackElem, tir.StackElemDyn, tir.StackLast, tir.StackNext)


def _has_call(x: Any) -> bool:
    """Whether the expression `x` holds a call of a P4 function (whose statements go before it)."""
    if isinstance(x, tir.Call | tir.OutCall):
        return True
    if isinstance(x, tuple | list):
        return any(_has_call(y) for y in x)
    if isinstance(x, tir.Expr):
        return any(_has_call(getattr(x, f.name)) for f in fields(x) if f.name != "type")
    return False


class CGen:
    """One program's C source."""

    def __init__(self, prog: Any) -> None:
        self.prog = prog
        rec: NativeRecord | None = prog.native
        if rec is None:
            raise Unsupported("the program was compiled without the native record")
        self.rec = rec
        self.types: dict[str, str] = {}       # P4 type name -> C struct name
        self.type_src: list[str] = []
        self.out: list[str] = []
        self.protos: list[str] = []
        self.bind = {py: (kind, name) for py, kind, name in prog.bindings}
        self.regs: dict[str, Extern] = {}
        self.cnts: dict[str, Extern] = {}
        self.tbls: dict[str, Extern] = {}
        self.frames: dict[str, str] = {}       # ctx "L" owner -> frame struct
        self.fn_ctx: dict[str, list[str]] = {}  # function -> its context parameter names
        self.ctx_types: dict[str, str] = {}     # current function: object parameter -> C type
        self.locals: dict[str, str] = {}
        self.tmp = 0
        self.in_parser = False
        self.cur_table_actions: dict[str, int] = {}
        self.pre: list[str] = []          # statements an expression needs before it (temps, packed field lists)
        self.ptr_params: set[str] = set()  # scalar out/inout parameters of the function: pointers to the caller's temps
        self.frame_ptrs: dict[str, set[str]] = {}   # frame -> its slots that point (a control's scalar out/inout)
        self.cur_frame: str | None = None
        self.fault_ret = "return;"        # how generated code leaves the current function on a run-time fault
        self.digests: list[str] = []      # digest names by the index the C code passes back
        self.log_msgs: list[str] = []
        self.value_sets: list[str] = []   # value set names by the index the C code passes back
        self.meters: list[str] = []       # meter names by the index the C code passes back
        self.uses_payload = False         # a `*_with_payload` hash reads K->pay (Python sets it before egress)
        self.arg_widths: dict[str, list[int]] = {}   # action name -> widths of its control-plane parameters

    # ------------------------------------------------------------------ types
    def ctype(self, t: T.Type) -> str:
        b = T.strip_new(t)
        if isinstance(b, T.HeaderT | T.StructT):
            key = f"{type(b).__name__}:{b.name}"
            if key not in self.types:
                cname = ("H_" if isinstance(b, T.HeaderT) else "S_") + re.sub(r"\W", "_", b.name)
                self.types[key] = cname
                lines = ["typedef struct {"]
                if isinstance(b, T.HeaderT):
                    lines.append("    uint8_t _v;")
                for f, ft in b.fields.items():
                    fb = T.strip_new(ft)
                    if isinstance(fb, T.Varbit):
                        lines.append(f"    {self.varbit_type(fb)} {_cf(f)};")
                    elif _is_obj(ft):
                        lines.append(f"    {self.ctype(ft)} {_cf(f)};")
                    else:
                        lines.append(f"    {_vt(ft)} {_cf(f)};")
                if len(lines) == 1 or (isinstance(b, T.HeaderT) and len(lines) == 2 and not b.fields):
                    lines.append("    uint8_t _empty;")
                lines.append(f"}} {cname};")
                self.type_src.append("\n".join(lines))
            return self.types[key]
        if isinstance(b, T.UnionT):
            # a union is its member headers side by side; valid when one is (the IR names the members that
            # setValid/extract make invalid, as the Python pipeline has it)
            key = f"union:{b.name}"
            if key not in self.types:
                cname = "U_" + re.sub(r"\W", "_", b.name)
                self.types[key] = cname
                lines = ["typedef struct {"] + [f"    {self.ctype(ft)} {_cf(f)};" for f, ft in b.fields.items()]
                if not b.fields:
                    lines.append("    uint8_t _empty;")
                self.type_src.append("\n".join(lines) + f"\n}} {cname};")
            return self.types[key]
        if isinstance(b, T.StackT):
            if not isinstance(b.elem, T.HeaderT | T.UnionT):
                raise Unsupported(f"stack of {b.elem}")
            et = self.ctype(b.elem)
            key = f"stack:{et}:{b.size}"
            if key not in self.types:
                cname = f"K_{et}_{b.size}"
                self.types[key] = cname
                self.type_src.append(f"typedef struct {{\n    {et} h[{b.size}];\n    u64 nxt;\n}} {cname};")
            return self.types[key]
        if isinstance(b, T.Varbit):     # a varbit local or control-frame slot
            return self.varbit_type(b)
        return _vt(t)

    def varbit_type(self, t: T.Varbit) -> str:
        """varbit<N> as C: its current length in bits and the bits MSB first as bytes (extract takes whole
        bytes, so the length is a multiple of 8)."""
        key = f"varbit:{t.width}"
        if key not in self.types:
            cname = f"V_{t.width}"
            self.types[key] = cname
            self.type_src.append(f"typedef struct {{\n    uint32_t len;\n    uint8_t b[{max(1, (t.width + 7) // 8)}];\n}} {cname};")
        return self.types[key]

    # ------------------------------------------------------------------ names
    def name(self, py: str, t: T.Type) -> str:
        if re.fullmatch(r"-?(0x[0-9a-fA-F]+|\d+)", py):
            v = int(py, 0)
            if v < 0 and _signed(t):
                v &= (1 << _width(t)) - 1
            if v < 0 or v >> 128 or (v >> 64 and not _ww(t)):
                raise Unsupported(f"constant {py}")
            return wide.const(v)
        if py in ("True", "False"):
            return "1" if py == "True" else "0"
        if py.startswith("L."):
            if py[2:] in self.frame_ptrs.get(self.cur_frame or "", ()):
                return f"(*L->{py[2:]})"
            return f"L->{py[2:]}"
        if py in self.ptr_params:
            return f"(*{py})"
        if py in self.ctx_types:
            return f"(*{py})"
        if py in self.bind:
            raise Unsupported(f"runtime object {py} used as a value")
        if re.fullmatch(r"[A-Za-z_]\w*", py):
            return py
        raise Unsupported(f"name {py!r}")

    # ------------------------------------------------------------------ expressions
    def e(self, n: tir.Expr) -> str:
        m = getattr(self, "e_" + type(n).__name__, None)
        if m is None:
            raise Unsupported(f"expression {type(n).__name__}")
        if not isinstance(n, tir.Call | tir.OutCall | tir.Logical | tir.Cond) and _has_call(n):
            n = self.in_order(n)
        return m(n)

    def in_order(self, n: tir.Expr) -> tir.Expr:
        """`n` with its scalar operands before the last one holding a call evaluated into temps first: a call's
        statements go before the expression (pre), and P4 (like the Python pipeline) evaluates left to right, so
        an operand read before the call must not see the call's copy-out."""
        kids = [(f.name, getattr(n, f.name)) for f in fields(n) if f.name != "type"]
        last = max((i for i, (_k, v) in enumerate(kids) if isinstance(v, tir.Expr) and _has_call(v)), default=-1)
        new: dict[str, Any] = {}
        for k, v in kids[:last]:
            if isinstance(v, tir.Expr) and not _is_obj(v.type) and not isinstance(v, tir.Const):
                tv = self.newtmp()
                self.pre.append(f"{_vt(v.type)} {tv} = {self.e(v)};")
                new[k] = tir.Name(v.type, tv)
        return replace(n, **new) if new else n

    def guarded(self, v: tir.Expr) -> tuple[str, list[str]]:
        """The C of `v` and the statements it needs first, kept apart (for an operand evaluated only
        sometimes: the right of && / ||, the arms of ?:)."""
        saved = self.pre
        self.pre = []
        try:
            return self.e(v), self.pre
        finally:
            self.pre = saved

    def e_Const(self, n: tir.Const) -> str:
        v = n.value
        if isinstance(v, bool):
            return "1" if v else "0"
        if isinstance(v, int):
            if v < 0 and _signed(n.type):
                v &= (1 << _width(n.type)) - 1
            if v < 0 or v >> 128 or (v >> 64 and not _ww(n.type)):
                raise Unsupported(f"constant {v}")
            return wide.const(v)
        raise Unsupported(f"constant {v!r}")

    def e_Name(self, n: tir.Name) -> str:
        return self.name(n.py, n.type)

    def e_Field(self, n: tir.Field) -> str:
        return f"{self.e(n.base)}.{_cf(n.name)}"

    def e_StackElem(self, n: tir.StackElem) -> str:
        return f"{self.e(n.base)}.h[{n.index}]"

    def e_StackElemDyn(self, n: tir.StackElemDyn) -> str:
        size = T.strip_new(n.base.type).size  # type: ignore[attr-defined]
        tv = self.newtmp()
        self.pre.append(f"{_vt(n.index.type)} {tv} = {self.e(n.index)};")
        self.pre.append(f"if ({tv} >= {size}) {{ K->fault = 3; {self.fault_ret} }}")
        return f"{self.e(n.base)}.h[{tv}]"

    def e_StackNext(self, n: tir.StackNext) -> str:
        size = T.strip_new(n.base.type).size  # type: ignore[attr-defined]
        b = self.e(n.base)
        self.pre.append(f"if ({b}.nxt >= {size}) {{ err = {V1_ERRORS.index('StackOutOfBounds')}; goto done; }}")
        return f"{b}.h[{b}.nxt]"

    def e_StackLast(self, n: tir.StackLast) -> str:
        b = self.e(n.base)
        self.pre.append(f"if ({b}.nxt == 0) {{ err = {V1_ERRORS.index('StackOutOfBounds')}; goto done; }}")
        return f"{b}.h[{b}.nxt - 1]"

    def e_StackLastIndex(self, n: tir.StackLastIndex) -> str:
        return f"(({self.e(n.base)}.nxt - 1) & 0xFFFFFFFFULL)"

    def e_IsValid(self, n: tir.IsValid) -> str:
        if n.union:
            return self.union_valid(self.e(n.base), n.base.type)
        return f"{self.e(n.base)}._v"

    @staticmethod
    def union_valid(u: str, t: T.Type) -> str:
        b = T.strip_new(t)
        assert isinstance(b, T.UnionT)
        return "(" + (" | ".join(f"{u}.{_cf(f)}._v" for f in b.fields) or "0") + ")"

    @staticmethod
    def invalid_elem(elem: str, t: T.Type) -> str:
        """C making a stack element invalid (a union: every member)."""
        b = T.strip_new(t)
        if isinstance(b, T.UnionT):
            return " ".join(f"{elem}.{_cf(f)}._v = 0;" for f in b.fields) or ";"
        return f"{elem}._v = 0;"

    def e_Not(self, n: tir.Not) -> str:
        return f"(!{self.e(n.operand)})"

    def e_Logical(self, n: tir.Logical) -> str:
        left = self.e(n.left)
        right, pre = self.guarded(n.right)
        if not pre:
            return f"({left} {n.op} {right})"
        tv = self.newtmp()      # the right operand's statements run only when it is evaluated (short-circuit)
        self.pre += [f"u64 {tv} = !!({left});", f"if ({'' if n.op == '&&' else '!'}{tv}) {{",
                     *("    " + x for x in pre), f"    {tv} = !!({right});", "}"]
        return tv

    def e_Compare(self, n: tir.Compare) -> str:
        lt = n.left.type
        if isinstance(T.strip_new(lt), T.Varbit) and n.op in ("==", "!="):
            a, b = self.e(n.left), self.e(n.right)
            eq = f"({a}.len == {b}.len && memcmp({a}.b, {b}.b, {a}.len >> 3) == 0)"
            return eq if n.op == "==" else f"(!{eq})"
        if isinstance(T.strip_new(lt), T.BoolT) or n.op in ("==", "!="):
            return f"({self.e(n.left)} {n.op} {self.e(n.right)})"
        if _ww(lt):
            return f"((u128){self.e(n.left)} {n.op} (u128){self.e(n.right)})"
        _width(lt)
        if _signed(lt):
            return f"({_sx(self.e(n.left), lt)} {n.op} {_sx(self.e(n.right), n.right.type)})"
        return f"({self.e(n.left)} {n.op} {self.e(n.right)})"

    def e_ObjEq(self, n: tir.ObjEq) -> str:
        """`==`/`!=` of headers, structs, unions or stacks, field by field as the Python pipeline's `_eq`: an
        operand that is not a plain path (or a path a call on the right could change) is evaluated once into a
        temp, left first."""
        def operand(x: tir.Expr, keep: bool) -> str:
            v = self.e(x)
            if keep and isinstance(x, _PATHS):
                return v
            tv = self.newtmp()
            self.pre.append(f"{self.ctype(x.type)} {tv} = {v};")
            return tv
        a = operand(n.left, not _has_call(n.right))
        b = operand(n.right, True)
        eq = _obj_eq_c(a, b, n.left.type)
        return f"(!{eq})" if n.negate else eq

    def e_Arith(self, n: tir.Arith) -> str:
        ww = _ww(n.type)
        if ww:
            r = f"((u128){self.e(n.left)} {n.op} (u128){self.e(n.right)})"
            return r if ww == 128 else f"({r} & {wide.mask(ww)})"
        w = _width(n.type)
        r = f"({self.e(n.left)} {n.op} {self.e(n.right)})"
        return r if w == 64 else f"({r} & {_mask(w)})"

    def e_Bitwise(self, n: tir.Bitwise) -> str:
        if _ww(n.type):
            return f"((u128){self.e(n.left)} {n.op} (u128){self.e(n.right)})"
        return f"({self.e(n.left)} {n.op} {self.e(n.right)})"

    def e_Complement(self, n: tir.Complement) -> str:
        if ww := _ww(n.type):
            return f"((~(u128){self.e(n.operand)}) & {wide.mask(ww)})"
        return f"((~{self.e(n.operand)}) & {_mask(_width(n.type))})"

    def e_Neg(self, n: tir.Neg) -> str:
        if ww := _ww(n.type):
            return f"(((u128)0 - (u128){self.e(n.operand)}) & {wide.mask(ww)})"
        return f"((0ULL - {self.e(n.operand)}) & {_mask(_width(n.type))})"

    def e_Cond(self, n: tir.Cond) -> str:
        c = self.e(n.cond)
        (a, pa), (b, pb) = self.guarded(n.then), self.guarded(n.other)
        if not pa and not pb:
            return f"({c} ? {a} : {b})"
        tv = self.newtmp()      # only the chosen arm's statements run
        ct = self.ctype(n.type) if _is_obj(n.type) else _vt(n.type)
        self.pre += [f"{ct} {tv};", f"if ({c}) {{", *("    " + x for x in pa), f"    {tv} = {a};", "} else {",
                     *("    " + x for x in pb), f"    {tv} = {b};", "}"]
        return tv

    def e_Div(self, n: tir.Div) -> str:
        if _signed(n.type):
            raise Unsupported("signed division")
        vt = _vt(n.type)
        a, b = self.e(n.left), self.e(n.right)
        op = n.op
        if vt == "u128":
            a = f"(u128){a}"
        if not n.checked:
            return f"({a} {op} {b})"
        t = self.newtmp()
        self.pre.append(f"{vt} {t} = {b};")
        self.pre.append(f"if ({t} == 0) {{ K->fault = 2; {self.fault_ret} }}")
        return f"({a} {op} {t})"

    def e_SatArith(self, n: tir.SatArith) -> str:
        w = _width(n.type)
        a, b = self.e(n.left), self.e(n.right)
        if _signed(n.type):
            op = "+" if n.op == "|+|" else "-"
            return f"p4n_satsigned({_sx(a, n.type)} {op} {_sx(b, n.type)}, {w})"
        if n.op == "|+|":
            return f"p4n_satadd({a}, {b}, {_mask(w)})"
        return f"({a} > {b} ? {a} - {b} : 0ULL)"

    def e_ShiftRight(self, n: tir.ShiftRight) -> str:
        if ww := _ww(n.type):
            a = self.e(n.left)
            if n.amount is not None:
                return "((u128)0)" if n.amount >= ww else f"((u128){a} >> {n.amount})"
            return f"p4n_shr128({a}, {self.e(n.right)}, {ww})"
        w = _width(n.type)
        a = self.e(n.left)
        if _signed(n.type):
            amt = str(min(n.amount, 63)) if n.amount is not None else f"p4n_min63({self.e(n.right)})"
            return f"((u64)(p4n_sext({a}, {w}) >> {amt}) & {_mask(w)})"
        if n.amount is not None:
            return "0ULL" if n.amount >= w else f"({a} >> {n.amount})"
        return f"p4n_shr({a}, {self.e(n.right)}, {w})"

    def e_ShiftLeft(self, n: tir.ShiftLeft) -> str:
        if ww := _ww(n.type):
            a = self.e(n.left)
            if n.amount is not None:
                return "((u128)0)" if n.amount >= ww else f"(((u128){a} << {n.amount}) & {wide.mask(ww)})"
            return f"p4n_shl128({a}, {self.e(n.right)}, {ww})"
        w = _width(n.type)
        a = self.e(n.left)
        if n.amount is not None:
            return "0ULL" if n.amount >= w else f"(({a} << {n.amount}) & {_mask(w)})"
        return f"p4n_shl({a}, {self.e(n.right)}, {w}, {_mask(w)})"

    def e_Concat(self, n: tir.Concat) -> str:
        if _ww(n.type):
            wr = _vw(n.right.type)
            return f"(((u128){self.e(n.left)} << {wr}) | ((u128){self.e(n.right)} & {_vmask(wr)}))"
        _width(n.type)
        wr = _width(n.right.type)
        return f"(({self.e(n.left)} << {wr}) | ({self.e(n.right)} & {_mask(wr)}))"

    def e_Slice(self, n: tir.Slice) -> str:
        w = n.hi - n.lo + 1
        if _ww(n.base.type):
            v = f"((u128){self.e(n.base)} >> {n.lo})"
            return f"({v} & {wide.mask(w)})" if w > 64 else f"((u64){v} & {_mask(w)})"
        return f"(({self.e(n.base)} >> {n.lo}) & {_mask(w)})"

    def e_Cast(self, n: tir.Cast) -> str:
        to, frm = T.strip_new(n.type), T.strip_new(n.operand.type)
        v = self.e(n.operand)
        if isinstance(to, T.BoolT):
            return f"({v} != 0)"
        if isinstance(frm, T.BoolT):
            return f"(u64)({v} ? 1 : 0)"
        if ww := _ww(to):
            if _signed(frm):       # sign-extended to the wide width
                return f"((u128)(__int128){_sx(v, frm)} & {wide.mask(ww)})"
            return f"((u128){v} & {wide.mask(ww)})"
        if _ww(frm):
            return f"((u64){v} & {_mask(_width(to))})"
        if _signed(frm):
            return f"((u64){_sx(v, frm)} & {_mask(_width(to))})"
        return f"({v} & {_mask(_width(to))})"

    def e_As(self, n: tir.As) -> str:
        return self.e(n.operand)

    def e_Truncated(self, n: tir.Truncated) -> str:
        return f"({self.e(n.operand)} & {_vmask(_vw(n.type))})"

    def e_ApplyResult(self, n: tir.ApplyResult) -> str:
        if not isinstance(n.base, tir.TableApply):
            raise Unsupported("apply result of a non-table")
        r = self.e(n.base)
        if n.member == "hit":
            return f"(({r} >> 16) & 1)"
        if n.member == "miss":
            return f"(!(({r} >> 16) & 1))"
        return f"({r} & 0xFFFF)"

    def e_TableApply(self, n: tir.TableApply) -> str:
        if n.func not in self.rec.tables:
            raise Unsupported(f"table {n.func}")
        self.cur_table_actions = self.table_action_ids(self.rec.tables[n.func])
        ctx = self.ctx_call(n.ctx_args)
        return f"{n.func}(I, K{', ' + ctx if ctx else ''})"

    def e_ExternCall(self, n: tir.ExternCall) -> str:
        if not isinstance(n.receiver, tir.Name) or n.receiver.py not in self.bind:
            raise Unsupported("extern call on a non-instance")
        py = n.receiver.py
        kind, name = self.bind[py]
        args = [self.e(a) for a in n.args]
        if n.extern == "register" and kind == "register":
            x = self.regs.setdefault(py, Extern("register", name, py, len(self.regs)))
            if n.method == "read":
                return f"p4n_reg_read(I, {x.index}, {args[0]})"
            if n.method == "write":
                return f"p4n_reg_write(I, {x.index}, {args[0]}, {args[1]})"
        if n.extern == "meter" and kind == "meter" and n.method == "execute_meter":
            # the cells (two-rate three-colour state, P4Runtime's configs) stay in the runtime's Meter: C asks it
            if name not in self.meters:
                self.meters.append(name)
            return f"p4n_meter(I->rng_handle, {self.meters.index(name)}, {args[0]}, K->pkt_len, K->now)"
        if n.extern == "counter" and kind == "counter" and n.method == "count":
            x = self.cnts.setdefault(py, Extern("counter", name, py, len(self.cnts)))
            return f"p4n_count(I, {x.index}, {args[0]}, K->pkt_len)"
        raise Unsupported(f"extern {n.extern}.{n.method}")

    def e_Make(self, n: tir.Make) -> str:
        """A header/struct value built inside an expression (an argument, a field of another value): into a
        temp first, its items evaluated left to right before any field is stored."""
        tv = self.newtmp()
        self.pre.append(f"{self.ctype(n.type)} {tv}; memset(&{tv}, 0, sizeof {tv});")
        self.pre.extend(self.set_object(tv, n, ""))
        return tv

    def e_Lookahead(self, n: tir.Lookahead) -> str:
        if not self.in_parser:
            raise Unsupported("lookahead outside the parser")
        nb = (n.width + 7) >> 3
        self.pre.append(f"if (off + {nb} > n) {{ err = {V1_ERRORS.index('PacketTooShort')}; goto done; }}")
        if not n.cls:
            if n.width > 128:
                raise Unsupported(f"lookahead of {n.width} bits")
            return f"p4n_get{'128' if n.width > 64 else ''}(data + off, 0, {n.width})"
        # a header (valid) or struct: its fields MSB first from the next bits, nothing consumed
        b = T.strip_new(n.type)
        assert isinstance(b, T.HeaderT | T.StructT)
        tv = self.newtmp()
        self.pre.append(f"{self.ctype(n.type)} {tv}; memset(&{tv}, 0, sizeof {tv});")
        bit = 0

        def leaves(t: T.HeaderT | T.StructT, path: str) -> None:
            nonlocal bit
            for f, ft in t.fields.items():
                sub = T.strip_new(ft)
                if isinstance(sub, T.StructT):
                    leaves(sub, f"{path}.{_cf(f)}")
                    continue
                if _is_obj(ft) or isinstance(sub, T.Varbit):
                    raise Unsupported("lookahead of a header or struct holding headers or varbit")
                w = _vw(ft)
                self.pre.append(f"{path}.{_cf(f)} = p4n_get{'128' if w > 64 else ''}(data + off, {bit}, {w});")
                bit += w
        leaves(b, tv)
        if isinstance(b, T.HeaderT):
            self.pre.append(f"{tv}._v = 1;")
        return tv

    def e_PacketLength(self, n: tir.PacketLength) -> str:
        if not self.in_parser:
            raise Unsupported("packet length outside the parser")
        return "(u64)n"

    def s_Advance(self, s: tir.Advance, ind: str) -> list[str]:
        def f():
            b = self.newtmp()
            return [f"{ind}{{ u64 {b} = ({self.e(s.bits)} + 7) >> 3;",
                    f"{ind}  if (off + {b} > n) {{ err = {V1_ERRORS.index('PacketTooShort')}; goto done; }}",
                    f"{ind}  off += (uint32_t){b}; }}"]
        return self.with_pre(ind, f)

    def e_Random(self, n: tir.Random) -> str:
        _width(n.type)
        return f"p4n_random(I, {self.e(n.lo)}, {self.e(n.hi)})"

    def packed(self, fields: tuple) -> str:
        """Statements packing `fields` MSB first from bit 0 into a zeroed p4n_pack temp (BMv2's layout: zero bits
        after the last field; csum16 reads an odd last byte as a zero-padded word); returns its name."""
        t = self.newtmp()
        widths = []
        for v, w in fields:
            if not isinstance(w, int):
                vb = T.strip_new(v.operand.type) if isinstance(v, tir.VarbitValue) else None
                if not isinstance(vb, T.Varbit):
                    raise Unsupported("a field list item of run-time width")
                widths.append(vb.width)      # at most; its bytes are put one by one
                continue
            if w > 128:
                raise Unsupported("field wider than 128 bits in a field list")
            widths.append(w)
        total = sum(widths)
        if total > 2000:
            raise Unsupported("field list longer than 250 bytes")
        self.pre.append(f"p4n_pack {t}; memset({t}.b, 0, {(total + 31) // 8}); {t}.bits = 0;")
        for v, w in fields:
            if not isinstance(w, int):
                vv, k = self.e(v.operand), self.newtmp()
                self.pre.append(f"for (uint32_t {k} = 0; {k} < ({vv}.len >> 3); {k}++) p4n_put(&{t}, {vv}.b[{k}], 8);")
                continue
            self.pre.append(f"p4n_put{'128' if w > 64 else ''}(&{t}, {self.e(v)}, {w});")
        return t

    def e_VarbitLength(self, n: tir.VarbitLength) -> str:
        return f"((u64){self.e(n.operand)}.len)"

    def e_Csum16(self, n: tir.Csum16) -> str:
        if not n.fields:
            return "0xFFFFULL"
        t = self.packed(n.fields)
        return f"p4n_csum16({t}.b, ({t}.bits + 7) >> 3)"

    def e_HashBytes(self, n: tir.HashBytes) -> str:
        algo = n.func.removeprefix("_hb_")
        if isinstance(n.data, tir.Packed) and n.data.payload:
            return self.payload_hash(algo, n)
        f = HASH_FUNCS.get(algo)
        if f is None or not isinstance(n.data, tir.Packed):
            raise Unsupported(f"hash {n.func}")
        t = self.packed(n.data.fields)
        return f"{f}({t}.b, ({t}.bits + 7) >> 3)"

    def payload_hash(self, algo: str, n: tir.HashBytes) -> str:
        """A hash over the packed field list and then the payload (the frame's bytes after the parser stopped):
        the job holds where they are (set by C at parse time, by Python before a later egress/compute)."""
        f = PAYLOAD_HASH_FUNCS.get(algo)
        if f is None or not isinstance(n.data, tir.Packed):
            raise Unsupported(f"hash {n.func} with payload")
        self.uses_payload = True
        t = self.packed(n.data.fields)
        return f"{f}({t}.b, ({t}.bits + 7) >> 3, K->pay, K->pay_len)"

    def e_Hash(self, n: tir.Hash) -> str:
        w = _width(n.type)
        hv, base = self.e(n.value), self.e(n.base)
        if n.max_const is not None:
            if n.max_const >> 64:
                raise Unsupported("hash max wider than 64 bits")
            return f"((({hv} % {n.max_const or 1}ULL) + {base}) & {_mask(w)})"
        m = self.newtmp()
        _width(n.max.type)
        self.pre.append(f"u64 {m} = {self.e(n.max)};")
        return f"((({hv} % ({m} ? {m} : 1ULL)) + {base}) & {_mask(w)})"

    # ------------------------------------------------------------------ statements
    def newtmp(self) -> str:
        """A C temp; `_nN`, apart from the compiler's own `_tN` locals (which reach C as declared locals)."""
        self.tmp += 1
        return f"_n{self.tmp}"

    def stmts(self, body, ind: str) -> list[str]:
        out: list[str] = []
        for s in body:
            out.extend(self.stmt(s, ind))
        return out

    def with_pre(self, ind: str, fn) -> list[str]:
        saved = self.pre
        self.pre = []
        try:
            lines = fn()
            return [ind + p for p in self.pre] + lines
        finally:
            self.pre = saved

    def stmt(self, s, ind: str) -> list[str]:
        m = getattr(self, "s_" + type(s).__name__, None)
        if m is None:
            raise Unsupported(f"statement {type(s).__name__}")
        return m(s, ind)

    def lvalue_store(self, lv: tir.Expr, val: str, ind: str) -> list[str]:
        if isinstance(lv, tir.Slice):
            w = lv.hi - lv.lo + 1
            m = ((1 << w) - 1) << lv.lo
            bw = _vw(lv.base.type)
            clear = ((1 << bw) - 1) ^ m
            base = self.e(lv.base)
            if bw > 64:
                return self.lvalue_store(
                    lv.base, f"(({base} & {wide.const(clear)}) | (((u128)({val})) << {lv.lo}))", ind)
            return self.lvalue_store(lv.base, f"(({base} & 0x{clear:X}ULL) | (({val}) << {lv.lo}))", ind)
        if isinstance(lv, tir.Name | tir.Field):
            _vw(lv.type) if not _is_obj(lv.type) and not isinstance(T.strip_new(lv.type), T.Varbit) else None
            return [f"{ind}{self.e(lv)} = {val};"]
        raise Unsupported(f"assignment to {type(lv).__name__}")

    def s_Assign(self, s: tir.Assign, ind: str) -> list[str]:
        return self.with_pre(ind, lambda: self.lvalue_store(s.target, self.e(s.value), ind))

    def set_object(self, target: str, v: tir.Expr, ind: str) -> list[str]:
        """Statements storing the object value `v` into the C object `target`."""
        if isinstance(v, tir.Copy):
            v = v.value
        if isinstance(v, tir.Name | tir.Field | tir.StackElem | tir.StackElemDyn | tir.StackLast | tir.StackNext):
            return [f"{ind}{target} = {self.e(v)};"]
        if isinstance(v, tir.Call | tir.OutCall | tir.Cond | tir.Lookahead):
            return [f"{ind}{target} = {self.e(v)};"]
        if isinstance(v, tir.Make):
            b = T.strip_new(v.type)
            if not isinstance(b, T.HeaderT | T.StructT):
                raise Unsupported(f"building a {b}")
            # the items are evaluated before any field is stored (P4's value semantics)
            tmps = []
            out = []
            for (f, ft), item in zip(b.fields.items(), v.items, strict=True):
                if _is_obj(ft):
                    tv = self.newtmp()
                    out.append(f"{ind}{self.ctype(ft)} {tv};")
                    out.extend(self.set_object(tv, item, ind))
                else:
                    tv = self.newtmp()
                    out.append(f"{ind}{_vt(ft)} {tv} = {self.e(item)};")
                tmps.append((f, tv))
            out += [f"{ind}{target}.{_cf(f)} = {tv};" for f, tv in tmps]
            if isinstance(b, T.HeaderT):
                out.append(f"{ind}{target}._v = 1;")
            return out
        raise Unsupported(f"object assignment from {type(v).__name__}")

    def s_SetObject(self, s: tir.SetObject, ind: str) -> list[str]:
        return self.with_pre(ind, lambda: self.set_object(self.e(s.target), s.value, ind))

    def s_Local(self, s: tir.Local, ind: str) -> list[str]:
        if s.py not in self.locals:
            raise Unsupported(f"local {s.py}")
        if isinstance(s.value, tir.Opaque):
            if _is_obj(s.value.type) or isinstance(T.strip_new(s.value.type), T.Varbit):
                return [f"{ind}memset(&{s.py}, 0, sizeof {s.py});"]
            return [f"{ind}{s.py} = 0;"]
        if _is_obj(s.value.type):
            return self.with_pre(ind, lambda: self.set_object(s.py, s.value, ind))
        return self.with_pre(ind, lambda: [f"{ind}{s.py} = {self.e(s.value)};"])

    def s_Pass(self, s, ind: str) -> list[str]:
        return []

    def s_Block(self, s: tir.Block, ind: str) -> list[str]:
        return [f"{ind}{{"] + self.stmts(s.body, ind + "    ") + [f"{ind}}}"]

    def s_If(self, s: tir.If, ind: str) -> list[str]:
        # conditions may need statements before them (pre): each arm's condition is evaluated in its own block
        out: list[str] = []
        closers = 0
        for i, (c, body) in enumerate(s.arms):
            pre_saved = self.pre
            self.pre = []
            cond = self.e(c)
            pre = self.pre
            self.pre = pre_saved
            if i > 0:
                out.append(f"{ind}}} else {{")
                closers += 1
            out.extend(ind + p for p in pre)
            out.append(f"{ind}if ({cond}) {{")
            out.extend(self.stmts(body, ind + "    "))
        if s.other is not None:
            out.append(f"{ind}}} else {{")
            out.extend(self.stmts(s.other, ind + "    "))
        out.append(f"{ind}}}" + "}" * closers)
        return out

    def s_Return(self, s: tir.Return, ind: str) -> list[str]:
        # out values are already in the caller's temps (see call_parts)
        v = s.value
        if v is None:
            return [f"{ind}return;"]
        if _is_obj(v.type):
            def obj() -> list[str]:
                tv = self.newtmp()
                return ([f"{ind}{self.ctype(v.type)} {tv};"] + self.set_object(tv, v, ind)
                        + [f"{ind}return {tv};"])
            return self.with_pre(ind, obj)
        return self.with_pre(ind, lambda: [f"{ind}return {self.e(v)};"])

    def s_StackShift(self, s: tir.StackShift, ind: str) -> list[str]:
        st = T.strip_new(s.stack.type)
        size = st.size  # type: ignore[attr-defined]
        b = self.e(s.stack)
        n = s.count
        elem = st.elem  # type: ignore[attr-defined]
        if s.op == "push_front":
            return [f"{ind}for (int _i = {size - 1}; _i >= 0; _i--) {{",
                    f"{ind}    if (_i >= {n}) {b}.h[_i] = {b}.h[_i - {n}]; else {{ {self.invalid_elem(b + '.h[_i]', elem)} }}",
                    f"{ind}}}",
                    f"{ind}{b}.nxt = {b}.nxt + {n} > {size} ? {size} : {b}.nxt + {n};"]
        return [f"{ind}for (int _i = 0; _i < {size}; _i++) {{",
                f"{ind}    if (_i + {n} < {size}) {b}.h[_i] = {b}.h[_i + {n}]; else {{ {self.invalid_elem(b + '.h[_i]', elem)} }}",
                f"{ind}}}",
                f"{ind}{b}.nxt = {b}.nxt > {n} ? {b}.nxt - {n} : 0;"]

    def s_Break(self, s, ind: str) -> list[str]:
        return [f"{ind}break;"]

    def s_Continue(self, s, ind: str) -> list[str]:
        return [f"{ind}continue;"]

    def s_For(self, s: tir.For, ind: str) -> list[str]:
        out = [f"{ind}{{ int {s.first} = 1;", f"{ind}for (;;) {{"]
        if s.updates:
            out += [f"{ind}    if (!{s.first}) {{"] + self.stmts(s.updates, ind + "        ") + [f"{ind}    }}"]
        out.append(f"{ind}    {s.first} = 0;")
        if s.cond is not None:
            saved = self.pre
            self.pre = []
            c = self.e(s.cond)
            out += [ind + "    " + p for p in self.pre]
            self.pre = saved
            out.append(f"{ind}    if (!({c})) break;")
        out += self.stmts(s.body, ind + "    ")
        return out + [f"{ind}}}}}"]

    def s_ForRange(self, s: tir.ForRange, ind: str) -> list[str]:
        if _signed(s.lo.type):
            raise Unsupported("for over a signed range")
        _width(s.lo.type)

        def f():
            lo, hi, k = self.newtmp(), self.newtmp(), self.newtmp()
            return ([f"{ind}{{ u64 {lo} = {self.e(s.lo)}, {hi} = {self.e(s.hi)};",
                     f"{ind}if ({lo} <= {hi}) for (u64 {k} = 0; {k} <= {hi} - {lo}; {k}++) {{",
                     f"{ind}    {s.var} = {lo} + {k};"]
                    + self.stmts(s.body, ind + "    ") + [f"{ind}}}}}"])
        return self.with_pre(ind, f)

    def s_ForList(self, s: tir.ForList, ind: str) -> list[str]:
        def f():
            vals = [self.e(i) for i in s.items]
            arr, k = self.newtmp(), self.newtmp()
            return ([f"{ind}{{ u64 {arr}[{max(1, len(vals))}] = {{{', '.join(vals) or '0'}}};",
                     f"{ind}for (int {k} = 0; {k} < {len(vals)}; {k}++) {{", f"{ind}    {s.var} = {arr}[{k}];"]
                    + self.stmts(s.body, ind + "    ") + [f"{ind}}}}}"])
        if s.items and _is_obj(s.items[0].type):
            raise Unsupported("for over a list of objects")
        if s.items:
            _width(s.items[0].type)
        return self.with_pre(ind, f)

    def s_ForStack(self, s: tir.ForStack, ind: str) -> list[str]:
        size = T.strip_new(s.stack.type).size  # type: ignore[attr-defined]
        k = self.newtmp()
        return self.with_pre(ind, lambda: [f"{ind}for (int {k} = 0; {k} < {size}; {k}++) {{",
                                           f"{ind}    {s.var} = {self.e(s.stack)}.h[{k}];"]
                             + self.stmts(s.body, ind + "    ") + [f"{ind}}}"])

    def _callback_values(self, values: tuple, what: str) -> tuple[str, int]:
        """The values into a u64 array temp for a call back into Python (digest, log_msg)."""
        vals = []
        for v in values:
            t = T.strip_new(v.type)
            if _signed(v.type) or isinstance(t, T.BoolT) or _is_obj(v.type):
                raise Unsupported(f"{what} of a signed, bool or header/struct value")
            _width(v.type)
            vals.append(self.e(v))
        arr = self.newtmp()
        self.pre.append(f"u64 {arr}[{max(1, len(vals))}] = {{{', '.join(vals) or '0'}}};")
        return arr, len(vals)

    def s_Digest(self, s: tir.Digest, ind: str) -> list[str]:
        if s.name not in self.digests:
            self.digests.append(s.name)
        i = self.digests.index(s.name)

        def f():
            arr, n = self._callback_values(s.values, "digest")
            return [f"{ind}p4n_digest(I->rng_handle, {i}, {arr}, {n});"]
        return self.with_pre(ind, f)

    def s_Log(self, s: tir.Log, ind: str) -> list[str]:
        if not isinstance(s.msg, tir.Const) or not isinstance(s.msg.value, str):
            raise Unsupported("log_msg with a computed message")
        if s.msg.value not in self.log_msgs:
            self.log_msgs.append(s.msg.value)
        i = self.log_msgs.index(s.msg.value)

        def f():
            arr, n = self._callback_values(s.values, "log_msg")
            return [f"{ind}p4n_log(I->rng_handle, {i}, {arr}, {n});"]
        return self.with_pre(ind, f)

    def fl_index(self, name: str | None) -> int:
        if not name or name == "_NOFL":
            return -1
        names = [x[0] for x in self.prog.native_field_lists]
        if name not in names:
            raise Unsupported(f"field list {name}")
        return names.index(name)

    def s_Clone(self, s: tir.Clone, ind: str) -> list[str]:
        fl = self.fl_index(s.field_list)
        return self.with_pre(ind, lambda: [f"{ind}K->clone_type = {2 if s.e2e else 1}; K->clone_fl = {fl}; "
                                           f"K->clone_session = {self.e(s.session)};"])

    def s_Requeue(self, s: tir.Requeue, ind: str) -> list[str]:
        fl = self.fl_index(s.field_list)
        what = "recirc" if s.recirculate else "resubmit"
        return [f"{ind}K->{what} = 1; K->{what}_fl = {fl};"]

    def field_list_fn(self) -> str:
        """p4n_field_list(i, src, dst): the preserved fields of field list i copied into a new instance."""
        lines = ["void p4n_field_list(int i, job_t *src, job_t *dst) {", "    switch (i) {"]
        for i, (_name, _key, paths) in enumerate(self.prog.native_field_lists):
            lines.append(f"    case {i}:")
            for path, _scalar in paths:
                role, _, rest = path.partition(".")
                part = {"m": "meta", "sm": "sm"}.get(role)
                if part is None:
                    raise Unsupported(f"field list path {path}")
                tail = "".join("." + _cf(x) for x in rest.split(".")) if rest else ""
                lines.append(f"        dst->{part}{tail} = src->{part}{tail};")
            lines.append("        break;")
        lines += ["    default: break;", "    }", "}"]
        return "\n".join(lines) + "\n"

    def s_OutsOnExit(self, s: tir.OutsOnExit, ind: str) -> list[str]:
        return self.stmts(s.body, ind)

    def s_Exit(self, s, ind: str) -> list[str]:
        return [f"{ind}K->exited = 1; return;"]

    def s_Eval(self, s: tir.Eval, ind: str) -> list[str]:
        return self.with_pre(ind, lambda: [f"{ind}(void){self.e(s.value)};", f"{ind}if (K->exited) return;"])

    def s_SetValidity(self, s: tir.SetValidity, ind: str) -> list[str]:
        def f() -> list[str]:
            out = [f"{ind}{self.e(x)}._v = 0;" for x in s.invalidate]
            return out + [f"{ind}{self.e(s.header)}._v = {1 if s.valid else 0};"]
        return self.with_pre(ind, f)

    def s_MarkToDrop(self, s: tir.MarkToDrop, ind: str) -> list[str]:
        sm = self.e(s.sm)
        return [f"{ind}{sm}.egress_spec = 511; {sm}.mcast_grp = 0;"]

    def s_Truncate(self, s: tir.Truncate, ind: str) -> list[str]:
        return self.with_pre(ind, lambda: [f"{ind}K->truncate = (int64_t){self.e(s.length)};"])

    def s_VerifyChecksum(self, s: tir.VerifyChecksum, ind: str) -> list[str]:
        def f():
            c = self.e(s.cond)
            # the checksum is computed only when cond holds (Python's `and`)
            pre = self.pre
            self.pre = []
            v = self.e(s.value)
            inner = self.pre
            self.pre = pre
            return ([f"{ind}if ({c}) {{"] + [ind + "    " + p for p in inner]
                    + [f"{ind}    if ({v} != {self.e(s.field)}) K->sm.checksum_error = 1;", f"{ind}}}"])
        return self.with_pre(ind, f)

    def s_Assert(self, s: tir.Assert, ind: str) -> list[str]:
        return self.with_pre(ind, lambda: [f"{ind}if (!({self.e(s.cond)})) {{ K->fault = 1; {self.fault_ret} }}"])

    def s_Switch(self, s: tir.Switch, ind: str) -> list[str]:
        def f():
            v = self.e(s.value)
            is_action = isinstance(s.value, tir.ApplyResult) and s.value.member == "action_run"
            ids = dict(self.cur_table_actions) if is_action else {}
            out = [f"{ind}{{ {_vt(s.value.type) if not is_action else 'u64'} {s.tmp} = {v};"]
            if is_action:
                out.append(f"{ind}if (K->exited) return;")
            first = True
            for arm in s.arms:
                conds = []
                for lab in arm.labels:
                    if is_action:
                        name = lab.value if isinstance(lab, tir.Const) else getattr(lab, "py", None)
                        if name not in ids:
                            raise Unsupported(f"switch label {name!r} (an action the table binds directional "
                                              "arguments of, or not in its list)")
                        conds.append(f"{s.tmp} == {ids[name]}")
                    else:
                        conds.append(f"{s.tmp} == {self.e(lab)}")
                out.append(f"{ind}{'if' if first else '} else if'} ({' || '.join(conds)}) {{")
                out.extend(self.stmts(arm.body, ind + "    "))
                first = False
            if s.default is not None:
                out.append(f"{ind}{'if (1)' if first else '} else'} {{")
                out.extend(self.stmts(s.default, ind + "    "))
                first = False
            if not first:
                out.append(f"{ind}}}")
            out.append(f"{ind}}}")
            return out
        return self.with_pre(ind, f)

    def callee_params(self, p: tir.CallPlan) -> list[tuple[str, T.Type, str]]:
        if p.func in self.rec.actions:
            return self.rec.actions[p.func].params
        if p.func in self.rec.controls:
            return self.rec.controls[p.func].params
        if p.func in self.rec.functions:
            return self.rec.functions[p.func].params
        if p.func in self.rec.parsers and self.rec.parsers[p.func].sub:
            return self.rec.parsers[p.func].params
        raise Unsupported(f"call of {p.func}")

    def s_CallStmt(self, s: tir.CallStmt, ind: str) -> list[str]:
        """Copy-in/copy-out made explicit: a scalar out/inout argument goes through a temp whose address the callee
        gets; the temps are copied out after the call, also when the callee exits (P4: copy-out on exit too),
        before unwinding further. A copied object (`temp`) likewise. A function's value is dropped."""
        p = s.plan
        self.callee_params(p)
        if p.out_offset and p.func not in self.rec.functions:
            raise Unsupported("call with a value and out parameters")

        def f():
            call, post = self.call_parts(p)
            return ([f"{ind}{call};"] + [ind + x for x in post]
                    + [f"{ind}if (K->exited | K->fault) {self.fault_ret}"])
        return self.with_pre(ind, f)

    def e_Call(self, n: tir.Call) -> str:
        return self.call_value(n.plan, n.type)

    def e_OutCall(self, n: tir.OutCall) -> str:
        return self.call_value(n.plan, n.type)

    def s_CallHelper(self, s: tir.CallHelper, ind: str) -> list[str]:
        return []       # the Python pipeline's copy-out helper; C copies out where the call is (call_value)

    def call_value(self, p: tir.CallPlan, t: T.Type) -> str:
        """A function's value: the call and its copy-out go before the expression (pre), into a temp."""
        if p.func not in self.rec.functions:
            raise Unsupported(f"value of a call of {p.func}")
        call, post = self.call_parts(p)
        tv = self.newtmp()
        self.pre.append(f"{self.ctype(t) if _is_obj(t) else _vt(t)} {tv} = {call};")
        self.pre.extend(post)
        self.pre.append(f"if (K->exited | K->fault) {self.fault_ret}")
        return tv

    def call_parts(self, p: tir.CallPlan) -> tuple[str, list[str]]:
        """The C call of `p` (its argument temps go to pre) and the copy-out statements after it."""
        params = self.callee_params(p)
        args = [self.ctx_call(p.prefix_args)] if p.prefix_args.strip() else []
        post: list[str] = []
        k = 0
        for a, (_py, t, d) in zip(p.args, params, strict=True):
            if _is_obj(t):
                ct = self.ctype(t)
                v = a.value.value if isinstance(a.value, tir.Copy) else a.value
                if a.temp:
                    self.pre.append(f"{ct} {a.temp};")
                    self.pre.extend(self.set_object(a.temp, v, ""))
                    args.append(f"&{a.temp}")
                    if a.target is not None:
                        post.append(f"{self.e(a.target)} = {a.temp};")
                    continue
                if isinstance(a.value, tir.Copy) or not isinstance(v, _PATHS):
                    # an `in` object (or a value built for the call): the callee sees the value at the call
                    tv = self.newtmp()
                    self.pre.append(f"{ct} {tv};")
                    self.pre.extend(self.set_object(tv, v, ""))
                    args.append(f"&{tv}")
                    continue
                args.append(f"&{self.e(v)}")
            elif d in ("out", "inout"):
                tv = self.newtmp()
                if isinstance(a.value, tir.Opaque):
                    self.pre.append(f"{_vt(t)} {tv} = 0;")
                else:
                    self.pre.append(f"{_vt(t)} {tv} = {self.e(a.value)};")
                args.append(f"&{tv}")
                lv = p.outs[k] if k < len(p.outs) else None
                k += 1
                if lv is not None:
                    post.extend(x.strip() for x in self.lvalue_store(lv, tv, ""))
            elif isinstance(a.value, tir.Opaque):      # `_` for an in parameter: its default value
                args.append("0ULL")
            else:
                args.append(self.e(a.value))
        return f"{p.func}({', '.join(['I', 'K'] + [x for x in args if x])})", post

    def s_Extract(self, s: tir.Extract, ind: str) -> list[str]:
        h = T.strip_new(s.header.type)
        assert isinstance(h, T.HeaderT)
        if T.varbit_field(h) is not None:
            return self.with_pre(ind, lambda: self.extract_varbit(s, h, ind))
        widths = _header_leaves(h)
        total = sum(w for _, w in widths)
        if total % 8:
            raise Unsupported("header not a whole number of bytes")
        nb = total // 8
        if s.stack is not None:
            size = T.strip_new(s.stack.type).size  # type: ignore[attr-defined]
            sb = self.e(s.stack)
            hv = self.newtmp()
            out = [f"{ind}if ({sb}.nxt >= {size}) {{ err = {V1_ERRORS.index('StackOutOfBounds')}; goto done; }}"]
            if s.member:        # the next union of a stack: its other members invalid, then this one
                et = T.strip_new(s.stack.type).elem  # type: ignore[attr-defined]
                uv = self.newtmp()
                out.append(f"{ind}{self.ctype(et)} *{uv} = &{sb}.h[{sb}.nxt]; {sb}.nxt += 1;")
                out += [f"{ind}{uv}->{_cf(m)}._v = 0;" for m in s.union_others]
                out.append(f"{ind}{self.ctype(h)} *{hv} = &{uv}->{_cf(s.member)};")
            else:
                out.append(f"{ind}{self.ctype(h)} *{hv} = &{sb}.h[{sb}.nxt]; {sb}.nxt += 1;")
            hp = f"(*{hv})"
        else:
            hp = self.e(s.header)
            out = [f"{ind}{self.e(x)}._v = 0;" for x in s.invalidate]
        out += [f"{ind}if (off + {nb} > n) {{ err = {V1_ERRORS.index('PacketTooShort')}; goto done; }}"]
        bit = 0
        for f, w in widths:
            out.append(f"{ind}{hp}.{_cf(f)} = p4n_get{'128' if w > 64 else ''}(data + off, {bit}, {w});")
            bit += w
        out.append(f"{ind}{hp}._v = 1; off += {nb};")
        return out

    def s_Emit(self, s: tir.Emit, ind: str) -> list[str]:
        h = T.strip_new(s.header.type)
        if not isinstance(h, T.HeaderT):
            raise Unsupported("emit of a non-path header")
        if T.varbit_field(h) is not None:
            if s.tmp:
                raise Unsupported("emit of a computed header holding a varbit")
            return self.emit_varbit(self.e(s.header), h, ind)
        widths = _header_leaves(h)
        total = sum(w for _, w in widths)
        if total % 8:
            raise Unsupported("header not a whole number of bytes")
        if s.tmp:       # a computed header value (e.g. a stack element at a run-time index): evaluated once
            def emit_tmp() -> list[str]:
                hv = self.newtmp()
                return [f"{ind}{self.ctype(h)} {hv};", *self.set_object(hv, s.header, ind),
                        *self.s_Emit(tir.Emit(tir.Name(s.header.type, hv), s.out), ind)]
            return [f"{ind}{{", *self.with_pre(ind + "    ", emit_tmp), f"{ind}}}"]
        hp = self.e(s.header)
        out = [f"{ind}if ({hp}._v) {{", f"{ind}    memset(o + len, 0, {total // 8});"]
        bit = 0
        for f, w in widths:
            out.append(f"{ind}    p4n_set{'128' if w > 64 else ''}(o + len, {bit}, {w}, {hp}.{_cf(f)});")
            bit += w
        out.append(f"{ind}    len += {total // 8};")
        out.append(f"{ind}}}")
        return out

    def s_ParserApply(self, s: tir.ParserApply, ind: str) -> list[str]:
        """`sub.apply(packet, ...)`: the sub-parser (a C function) continues at `off` and hands back its offset and
        error; the scalar out values and copied objects go back (call_parts) on accept and on a reject or an
        error too (BMv2 keeps a rejecting sub-parser's writes), then the parser stops there with that error."""
        p = s.plan
        if p.func not in self.rec.parsers:
            raise Unsupported(f"apply of parser {p.func}")

        def f() -> list[str]:
            call, post = self.call_parts(replace(p, prefix_args=""))
            so, e = self.newtmp(), self.newtmp()
            call = f"{p.func}(I, K, data, n, &{so}" + call[len(p.func) + len("(I, K"):]
            return [f"{ind}{{ uint32_t {so} = off;", f"{ind}  int {e} = {call};", f"{ind}  off = {so};",
                    f"{ind}  if (K->fault) goto done;", *(f"{ind}  {x}" for x in post),
                    f"{ind}  if ({e}) {{ err = {e}; goto done; }}", f"{ind}}}"]
        return self.with_pre(ind, f)

    def varbit_layout(self, h: T.HeaderT) -> list[tuple[str, int, T.Type]]:
        """A varbit header's fields with their static bit offsets: fields after the varbit field start its
        current length later (`+ L` at run time)."""
        out, bit = [], 0
        for f, ft in h.fields.items():
            vb = T.strip_new(ft)
            w = vb.width if isinstance(vb, T.Varbit) else _vw(ft)
            out.append((f, bit, ft))
            if not isinstance(vb, T.Varbit):
                bit += w
        if bit % 8:
            raise Unsupported("header not a whole number of bytes")
        return out

    def extract_varbit(self, s: tir.Extract, h: T.HeaderT, ind: str) -> list[str]:
        """extract of a header holding a varbit field, with the Python pipeline's checks in its order: the length
        above the maximum (HeaderTooShort), not whole bytes (ParserInvalidArgument), a full stack, the packet
        too short; the varbit's bytes then the fields after it, L bits further."""
        lay = self.varbit_layout(h)
        fixed = sum(_vw(ft) for _f, _b, ft in lay if not isinstance(T.strip_new(ft), T.Varbit))
        L, nb, k = self.newtmp(), self.newtmp(), self.newtmp()
        out = [f"{ind}{{ u64 {L} = {self.e(s.length) if s.length is not None else '0'};"]
        if s.length is not None:
            out += [f"{ind}if ({L} > {s.length_max}) {{ err = {V1_ERRORS.index('HeaderTooShort')}; goto done; }}",
                    f"{ind}if ({L} & 7) {{ err = {V1_ERRORS.index('ParserInvalidArgument')}; goto done; }}"]
        if s.stack is not None:
            if s.member:
                raise Unsupported("extract of a varbit header into a union stack")
            size = T.strip_new(s.stack.type).size  # type: ignore[attr-defined]
            sb, hv = self.e(s.stack), self.newtmp()
            out += [f"{ind}if ({sb}.nxt >= {size}) {{ err = {V1_ERRORS.index('StackOutOfBounds')}; goto done; }}",
                    f"{ind}{self.ctype(h)} *{hv} = &{sb}.h[{sb}.nxt]; {sb}.nxt += 1;"]
            hp = f"(*{hv})"
        else:
            hp = self.e(s.header)
            out += [f"{ind}{self.e(x)}._v = 0;" for x in s.invalidate]
        out += [f"{ind}u64 {nb} = ({fixed} + {L}) >> 3;",
                f"{ind}if (off + {nb} > n) {{ err = {V1_ERRORS.index('PacketTooShort')}; goto done; }}"]
        after = ""
        for f, bit, ft in lay:
            if isinstance(T.strip_new(ft), T.Varbit):
                out += [f"{ind}{hp}.{_cf(f)}.len = (uint32_t){L};",
                        f"{ind}for (u64 {k} = 0; {k} < ({L} >> 3); {k}++) "
                        f"{hp}.{_cf(f)}.b[{k}] = (uint8_t)p4n_get(data + off, {bit} + (int)(8 * {k}), 8);"]
                after = f" + (int){L}"
                continue
            w = _vw(ft)
            out.append(f"{ind}{hp}.{_cf(f)} = p4n_get{'128' if w > 64 else ''}(data + off, {bit}{after}, {w});")
        return out + [f"{ind}{hp}._v = 1; off += (uint32_t){nb}; }}"]

    def emit_varbit(self, hp: str, h: T.HeaderT, ind: str) -> list[str]:
        lay = self.varbit_layout(h)
        fixed = sum(_vw(ft) for _f, _b, ft in lay if not isinstance(T.strip_new(ft), T.Varbit))
        vf = next(f for f, _b, ft in lay if isinstance(T.strip_new(ft), T.Varbit))
        nb, k = self.newtmp(), self.newtmp()
        out = [f"{ind}if ({hp}._v) {{", f"{ind}    int {nb} = (int)(({fixed} + {hp}.{_cf(vf)}.len) >> 3);",
               f"{ind}    memset(o + len, 0, {nb});"]
        after = ""
        for f, bit, ft in lay:
            if isinstance(T.strip_new(ft), T.Varbit):
                out.append(f"{ind}    for (uint32_t {k} = 0; {k} < ({hp}.{_cf(f)}.len >> 3); {k}++) "
                           f"p4n_set(o + len, {bit} + (int)(8 * {k}), 8, {hp}.{_cf(f)}.b[{k}]);")
                after = f" + (int){hp}.{_cf(f)}.len"
                continue
            w = _vw(ft)
            out.append(f"{ind}    p4n_set{'128' if w > 64 else ''}(o + len, {bit}{after}, {w}, {hp}.{_cf(f)});")
        return out + [f"{ind}    len += {nb};", f"{ind}}}"]

    def s_Verify(self, s: tir.Verify, ind: str) -> list[str]:
        return self.with_pre(ind, lambda: [f"{ind}if (!({self.e(s.cond)})) {{ err = (int){self.e(s.error)}; goto done; }}"])

    # ------------------------------------------------------------------ functions
    def ctx_call(self, ctx: str) -> str:
        names = [x.strip() for x in ctx.split(",") if x.strip()]
        return ", ".join("L" if x == "L" else x for x in names)

    def ctx_params(self, names: list[str], owner_frame: str | None, types: dict[str, str]) -> list[str]:
        out = []
        for x in names:
            if x == "L":
                if owner_frame is None:
                    raise Unsupported("frame without owner")
                out.append(f"{owner_frame} *L")
            else:
                out.append(f"{types[x]} *{x}")
        return out

    def collect_locals(self, body) -> dict[str, T.Type]:
        found: dict[str, T.Type] = {}

        def walk(x):
            if isinstance(x, tir.Local):
                found[x.py] = x.value.type
            elif isinstance(x, tir.ForRange):
                found[x.var] = x.lo.type
            elif isinstance(x, tir.ForList) and x.items:
                found[x.var] = x.items[0].type
            elif isinstance(x, tir.ForStack):
                found[x.var] = T.strip_new(x.stack.type).elem  # type: ignore[attr-defined]
            if isinstance(x, tuple | list):
                for y in x:
                    walk(y)
            elif hasattr(x, "__dataclass_fields__") and type(x).__module__ == tir.__name__:
                for fn in x.__dataclass_fields__:
                    if fn != "type":
                        walk(getattr(x, fn))
        walk(body)
        return found

    def function(self, func: str, params: list[str], body, ind="    ", prologue=(), ret: str = "void",
                 epilogue=()) -> None:
        self.locals = {}
        self.fault_ret = "return;" if ret == "void" else f"return ({ret}){{0}};"
        decls = []
        for py, t in self.collect_locals(body).items():
            if "." in py:
                raise Unsupported(f"local {py}")
            ct = self.ctype(t)
            self.locals[py] = ct
            decls.append(f"    {ct} {py} = 0;" if ct in ("u64", "u128") else f"    {ct} {py};")
        proto = f"static {ret} {func}({', '.join(['inst_t *I', 'job_t *K'] + params)})"
        self.protos.append(proto + ";")
        lines = self.stmts(body, ind)
        self.out.append(proto + " {")
        self.out.extend(decls)
        self.out.extend(prologue)
        self.out.extend(lines)
        self.out.extend(epilogue)
        self.out.append("}")
        self.fault_ret = "return;"

    def p4function(self, f: FunctionRec) -> None:
        """A P4 function: scalar out/inout parameters are pointers to the caller's temps, objects pointers
        (an `in` object is the caller's copy), the value returned by value (a scalar as u64)."""
        self.ctx_types = {}
        self.cur_frame = None
        self.ptr_params = set()
        params = [self.param_decl(py, t, d) for py, t, d in f.params]
        if isinstance(T.strip_new(f.ret), T.VoidT):
            ret = "void"
        elif _is_obj(f.ret):
            ret = self.ctype(f.ret)
        else:
            ret = _vt(f.ret)
        self.function(f.func, params, f.body, ret=ret,
                      epilogue=() if ret == "void" else (f"    return ({ret}){{0}};",))

    def obj_types(self, params: list[tuple[str, T.Type, str]]) -> dict[str, str]:
        types = {}
        for py, t, _d in params:
            if _is_obj(t):
                types[py] = self.ctype(t)
        return types

    def control(self, c: ControlRec) -> None:
        types = self.obj_types(c.params)
        self.ctx_types = types
        scalar = [(py, t) for py, t, _d in c.params if not _is_obj(t) and not isinstance(T.strip_new(t), T.ExternT)]
        outs = {py for py, t, d in c.params if (py, t) in scalar and d in ("out", "inout")}
        frame = None
        prologue = []
        self.ptr_params = set()
        if scalar or c.frame:
            frame = "F_" + c.func
            self.frame_ptrs[frame] = outs
            fl = [f"    {self.ctype(t)} {'*' if py in outs else ''}{py};" for py, t in scalar]
            fl += [f"    {self.ctype(t)} {py};" for py, t, _ in c.frame]
            self.type_src.append("typedef struct {\n" + "\n".join(fl) + f"\n}} {frame};")
            self.cur_frame = frame
            prologue.append(f"    {frame} L_s; memset(&L_s, 0, sizeof L_s); {frame} *L = &L_s;")
            for py, _t in scalar:
                prologue.append(f"    L->{py} = {py};")
            for py, _t, init in c.frame:
                if init is not None:
                    self.pre = []
                    v = self.e(init.value if isinstance(init, tir.Copy) else init)
                    prologue.extend("    " + p for p in self.pre)
                    prologue.append(f"    L->{py} = {v};")
        self.frames[c.func] = frame or ""
        params = []
        for py, t, _d in c.params:
            if isinstance(T.strip_new(t), T.ExternT):
                params.append(f"void *{py}")     # packet_out: the deparser's buffer comes through K
            elif _is_obj(t):
                params.append(f"{types[py]} *{py}")
            else:
                params.append(f"{_vt(t)} {'*' if py in outs else ''}{py}")
        self.cur_frame = frame
        self.function(c.func, params, c.body, prologue=prologue)

    def action(self, a: ActionRec, frame: str | None, ctx_types: dict[str, str]) -> None:
        self.ctx_types = dict(ctx_types)
        self.cur_frame = frame
        self.ptr_params = set()
        params = self.ctx_params(a.ctx_args, frame, ctx_types)
        for py, t, d in a.params:
            if _is_obj(t) and d not in ("inout", "in", "out"):
                raise Unsupported("object action parameter")
            params.append(self.param_decl(py, t, d))
        self.function(a.func, params, a.body)

    def param_decl(self, py: str, t, d: str) -> str:
        """One parameter of a function or action: an object by pointer, an out/inout scalar by pointer to
        the caller's temp, an in scalar by value (u64)."""
        if _is_obj(t):
            ct = self.ctype(t)
            self.ctx_types[py] = ct
            return f"{ct} *{py}"
        vt = _vt(t)
        if vt == "u64":
            _width(t)
        if d in ("out", "inout"):
            self.ptr_params.add(py)
            return f"{vt} *{py}"
        return f"{vt} {py}"

    def table_action_ids(self, t: TableRec) -> dict[str, int]:
        return {name: i for i, name in enumerate(t.dispatch)}

    def direct_meter_lines(self, t: TableRec, x: Extern) -> list[str]:
        """A table's direct meter (BMv2): on a hit the runtime's `DirectMeter.execute` runs for the entry (its cell
        and P4Runtime config stay on the runtime entry; C passes the entry's sequence number back, as for direct
        counters) and the colour goes to the target of the meter's read(), before the action runs."""
        if not t.direct_meter:
            return []
        info = self.prog.info.tables.get(t.name)
        target = self.rec.meter_targets.get(getattr(info, "direct_meter", None) or "")
        if target is None:
            raise Unsupported(f"table {t.name}: direct meter without a read target")
        saved, self.pre = self.pre, []
        try:
            store = self.lvalue_store(target, "dm_colour", "        ")
            pre = self.pre
        finally:
            self.pre = saved
        return ["    if (hit) {",
                f"        u64 dm_colour = p4n_dmeter(I->rng_handle, {x.index}, e->seq, K->pkt_len, K->now);",
                *("        " + p for p in pre), *store, "    }"]

    def bound_case(self, i: int, bound: tuple[tir.CallPlan, list[str]], cp: list) -> list[str]:
        """The dispatch case of an action whose directional arguments the table's action list binds: the entry's
        arguments as the temps the recorded call reads, then that call (its bound arguments evaluated each time,
        with copy-in/copy-out), as the Python pipeline's bound dispatcher."""
        plan, names = bound
        if len(cp) > 16:
            raise Unsupported("more than 16 action parameters")
        out = [f"    case {i}: {{"]
        out += [f"        u64 {py} = (a[{j}] & {_mask(_width(cp[j][1]))});" for j, py in enumerate(names)]
        out += self.s_CallStmt(tir.CallStmt(plan), "        ")
        return out + ["        break;", "    }"]

    def table(self, t: TableRec, frame: str | None, ctx_types: dict[str, str]) -> None:
        x = self.tbls.setdefault(t.func, Extern("table", t.name, t.func, len(self.tbls)))
        self.ctx_types = dict(ctx_types)
        self.cur_frame = frame
        self.ptr_params = set()
        self.fault_ret = "return 0;"
        params = self.ctx_params(t.ctx_args, frame, ctx_types)
        proto = f"static int {t.func}({', '.join(['inst_t *I', 'job_t *K'] + params)})"
        self.protos.append(proto + ";")
        self.pre = []
        match = [k for k in t.keys if k.kind != "selector"]
        sel = [k for k in t.keys if k.kind == "selector"]
        keys = []
        for k in match:
            if k.width > 64:
                keys += self.wide_key(k)
                continue
            keys.append(self.e(k.node) if not isinstance(T.strip_new(k.node.type), T.BoolT)
                        else f"(u64)({self.e(k.node)} ? 1 : 0)")
        if len(keys) > 8:
            raise Unsupported("more than 8 key words (a field wider than 64 bits takes two)")
        lines = [f"    u64 key[{max(1, len(keys))}] = {{{', '.join(keys) or '0'}}};"]
        lines.append(f"    p4n_table *T = I->tbl[{x.index}];")
        lines.append("    const p4n_entry *e = p4n_find(T, key);")
        info = self.prog.info.tables.get(t.name)
        if info is not None and (info.direct_counter or info.idle_timeout):
            # the hit entry's direct counter and last-hit time are the runtime entry's (P4Runtime reads them)
            lines.append(f"    if (e) p4n_entry_hit(I->rng_handle, {x.index}, e->seq, K->pkt_len);")
        lines.append("    int act; const u64 *a; int hit = e != 0;")
        lines.append("    if (!e) { act = T->def_action; a = T->def_args; }")
        lines.append("    else if (e->group < 0) { act = e->action; a = e->args; }")
        lines.append("    else {")
        lines.append("        int32_t len = T->sel_len[e->group], off = T->sel_off[e->group];")
        lines.append("        if (len == 0) { hit = 0; act = T->def_action; a = T->def_args; }")
        lines.append("        else if (len == 1) { act = T->mem[off].action; a = T->mem[off].args; }")
        lines.append("        else {")
        if sel:
            self.pre_sel: list[str] = []
            pk = self.newtmp()
            lines.append(f"            p4n_pack {pk}; memset({pk}.b, 0, sizeof {pk}.b); {pk}.bits = 0;")
            for k in sel:
                if k.width > 128:
                    raise Unsupported("selector field wider than 128 bits")
                lines.append(f"            p4n_put{'128' if k.width > 64 else ''}(&{pk}, {self.e(k.node)}, {k.width});")
            info = self.prog.info.tables.get(t.name)
            impl = self.prog.info.externs.get(getattr(info, "implementation", None) or "")
            hf = HASH_FUNCS.get(getattr(impl, "algo", "") or "")
            if hf is None:
                raise Unsupported(f"table {t.name}: selector hash {getattr(impl, 'algo', '?')}")
            lines.append(f"            u64 h = {hf}({pk}.b, ({pk}.bits + 7) >> 3);")
            lines.append("            int32_t m = off + (int32_t)(h % (u64)len);")
            lines.append("            act = T->mem[m].action; a = T->mem[m].args;")
        else:
            lines.append("            act = -1; a = T->def_args;")
        lines.append("        }")
        lines.append("    }")
        lines += self.direct_meter_lines(t, x)
        lines.append("    switch (act) {")
        for i, (name, (func, with_ctx)) in enumerate(t.dispatch.items()):
            if not func:
                lines.append(f"    case {i}: break;")
                continue
            arec = self.rec.actions.get(func)
            if arec is None:
                raise Unsupported(f"action {name}")
            cp = [p for p in arec.params if p[2] == ""]
            if name in t.bound_calls:
                lines += self.bound_case(i, t.bound_calls[name], cp)
                continue
            data, nwords = self.action_data(name, cp)
            args = ([self.ctx_call(", ".join(t.ctx_args))] if with_ctx and t.ctx_args else []) + data
            if nwords > 16:
                raise Unsupported("more than 16 words of action data (a parameter wider than 64 bits takes two)")
            lines.append(f"    case {i}: {func}({', '.join(['I', 'K'] + args)}); break;")
        lines.append("    default: break;")
        lines.append("    }")
        lines.append("    return (act & 0xFFFF) | (hit << 16);")
        self.out.append(proto + " {")
        self.out.extend("    " + p for p in self.pre)
        self.out.extend(lines)
        self.out.append("}")

    def wide_key(self, k: Any) -> list[str]:
        """A key field wider than 64 bits as two key words, high first (the loader splits entries the same way,
        wide.split), evaluated once into a temp."""
        if k.kind == "range" or k.width > 128:
            raise Unsupported(f"{k.kind} key field of {k.width} bits")
        tv = self.newtmp()
        self.pre.append(f"u128 {tv} = {self.e(k.node)};")
        return [f"(u64)({tv} >> 64)", f"(u64){tv}"]

    def action_data(self, name: str, cp: list) -> tuple[list[str], int]:
        """The C arguments of an action's control-plane parameters from the entry's data words `a` (a value
        wider than 64 bits in two words, high first), and how many words; the widths go to the loader."""
        out, j, widths = [], 0, []
        for _py, pt, _d in cp:
            w = _vw(pt)
            widths.append(w)
            if w > 64:
                out.append(f"((((u128)a[{j}] << 64) | a[{j + 1}]) & {wide.mask(w)})")
                j += 2
            else:
                out.append(f"(a[{j}] & {_mask(w)})")
                j += 1
        self.arg_widths[name] = widths
        return out, j

    def parser(self, p: ParserRec) -> None:
        types = self.obj_types(p.params)
        self.ctx_types = types
        self.ptr_params = set()
        self.cur_frame = None
        if p.sub:       # a sub-parser's parameters as a P4 function's (scalar out/inout: the caller's temps)
            params = ["uint32_t *offp"] + [self.param_decl(py, t, d) for py, t, d in p.params]
        else:
            params = [f"{types[py]} *{py}" for py, t, _d in p.params if _is_obj(t)]
            if len(params) != len(p.params):
                raise Unsupported("scalar parser parameters")
        body: list[str] = []
        idx = {s.name: s.index for s in p.states}
        all_stmts = list(p.locals) + [x for s in p.states for x in s.body]
        self.locals = {}
        decls = []
        for py, t in self.collect_locals(all_stmts).items():
            ct = self.ctype(t)
            self.locals[py] = ct
            decls.append(f"    {ct} {py} = 0;" if ct in ("u64", "u128") else f"    {ct} {py};")

        def goto(target: str) -> str:
            if target == "accept":
                return "goto done;"
            if target == "reject":
                return "{ err = -1; goto done; }"
            return f"goto st_{idx[target]};"
        start = idx["start"]
        self.in_parser = True
        self.fault_ret = "goto done;"
        body.extend(self.stmts(p.locals, "    "))        # the parser's locals, initialised once per packet
        body.append(f"    goto st_{start};")
        for s in p.states:
            body.append(f"st_{s.index}: /* {s.name} */")
            body.extend(self.stmts(s.body, "    "))
            if s.keys is None:
                body.append("    " + goto(s.target))
                continue
            self.pre = []
            kv: list[str] = []
            for k in s.keys:
                tv = self.newtmp()
                self.pre.append(f"{_vt(k.type)} {tv} = {self.e(k)};")
                kv.append(tv)
            body.append("    {")
            body.extend("    " + x for x in self.pre)
            for c in s.cases:
                if c.value_set:
                    # members stay in the runtime's ValueSet (P4Runtime writes them): C asks it
                    kind, name = self.bind.get(c.value_set, ("", ""))
                    if kind != "value_set":
                        raise Unsupported(f"value set {c.value_set}")
                    if any(_ww(k.type) for k in s.keys):
                        raise Unsupported("value set of a key wider than 64 bits")
                    if name not in self.value_sets:
                        self.value_sets.append(name)
                    arr = self.newtmp()
                    body.append(f"        {{ u64 {arr}[] = {{{', '.join(kv)}}};")
                    body.append(f"          if (p4n_vs_match(I->rng_handle, {self.value_sets.index(name)}, {arr}, "
                                f"{len(kv)})) {goto(c.target)} }}")
                    continue
                conds = []
                for tv, it in zip(kv, c.items, strict=True):
                    kind, *vals = it
                    if kind == "value":
                        conds.append(f"{tv} == {self.e(vals[0])}")
                    elif kind == "mask":
                        conds.append(f"({tv} & {self.e(vals[1])}) == ({self.e(vals[0])} & {self.e(vals[1])})")
                    elif kind == "range":
                        conds.append(f"({self.e(vals[0])} <= {tv} && {tv} <= {self.e(vals[1])})")
                body.append(f"        if ({' && '.join(conds) or '1'}) {goto(c.target)}")
            body.append(f"        err = {V1_ERRORS.index('NoMatch')}; goto done;")
            body.append("    }")
        self.in_parser = False
        self.fault_ret = "return;"
        proto = (f"static int {p.func}(inst_t *I, job_t *K, const uint8_t *data, uint32_t n, "
                 f"{', '.join(params)})")
        self.out.append(proto + " {")
        if p.sub:       # returns the error (0 accept, -1 reject, else the parser error), the offset through offp
            self.protos.append(proto + ";")
            self.out.append("    uint32_t off = *offp; int err = 0;")
        else:
            self.out.append("    uint32_t off = 0; int err = 0;")
        self.out.extend(decls)
        self.out.extend(body)
        self.out.append("done:")
        self.out.append("    *offp = off; return err;" if p.sub else "    K->parser_err = err; return (int)off;")
        self.out.append("}")

    # ------------------------------------------------------------------ whole program
    def generate(self) -> CProgram:
        rec = self.rec
        for fn in rec.functions.values():
            self.p4function(fn)
        v1 = self.prog.native_v1
        H, M, SM = (self.ctype(v1[k]) for k in ("H", "M", "SM"))
        entry = self.prog.native_entry
        # which frame and context types each action/table was declared under: by the controls' parameters
        # (actions and tables name the same context objects as their control)
        ctx_of_control: dict[str, dict[str, str]] = {}
        for c in rec.controls.values():
            if c.func == entry["deparser"]:
                continue
            self.control(c)
            ctx_of_control[c.func] = self.obj_types(c.params)
        # an action or table's context types: the object parameters it names are the control's, by name
        # (of the control whose name prefix it carries when controls share a parameter name with different types)
        all_ctx: dict[str, str] = {}
        clash = False
        for c in rec.controls.values():
            for k, v in self.obj_types(c.params).items():
                clash |= all_ctx.get(k, v) != v
                all_ctx[k] = v

        def ctx_for(func: str, ctx_args: list[str]) -> dict[str, str]:
            if not clash or not [x for x in ctx_args if x != "L"]:
                return all_ctx
            owner = self._owner(func)
            if owner is None:
                raise Unsupported("controls whose parameters share a name with different types")
            return ctx_of_control[owner]
        for a in rec.actions.values():
            frame = self._frame_for(a.ctx_args, a.func)
            self.action(a, frame, ctx_for(a.func, a.ctx_args))
        for t in rec.tables.values():
            frame = self._frame_for(t.ctx_args, t.func)
            self.table(t, frame, ctx_for(t.func, t.ctx_args))
        for p in rec.parsers.values():
            self.parser(p)
        head = [self._runtime(), wide.TYPEDEF, *self.type_src]
        nreg, ncnt, ntbl = max(1, len(self.regs)), max(1, len(self.cnts)), max(1, len(self.tbls))
        # the payload, for `*_with_payload` hashes (only programs that have one carry it)
        pay_fields = "    const uint8_t *pay; uint32_t pay_len;\n" if self.uses_payload else ""
        set_pay = " K->pay = data + off; K->pay_len = n - (uint32_t)off;" if self.uses_payload else ""
        inst = f"""
typedef struct {{
    u64 *reg[{nreg}]; u64 reg_size[{nreg}]; u64 reg_mask[{nreg}];
    u64 *cnt_p[{ncnt}]; u64 *cnt_b[{ncnt}]; u64 cnt_size[{ncnt}];
    p4n_table *tbl[{ntbl}];
    uint64_t rng_handle;
}} inst_t;
typedef struct {{
    {H} hdr; {M} meta; {SM} sm;
    uint64_t now; uint32_t pkt_len; int32_t parser_err; uint32_t payload_off;
    int64_t truncate; int32_t exited; int32_t fault;
    int32_t clone_type; int32_t clone_fl; u64 clone_session;   /* clone_type: 0 none, 1 I2E, 2 E2E */
    int32_t resubmit; int32_t resubmit_fl; int32_t recirc; int32_t recirc_fl;   /* fl: field list, -1 none */
{pay_fields}}} job_t;
"""
        helpers = """
static inline u64 p4n_reg_read(inst_t *I, int r, u64 i) { return i < I->reg_size[r] ? I->reg[r][i] : 0; }
static inline u64 p4n_reg_write(inst_t *I, int r, u64 i, u64 v) {
    if (i < I->reg_size[r]) I->reg[r][i] = v & I->reg_mask[r];
    return 0;
}
static inline u64 p4n_count(inst_t *I, int c, u64 i, u64 nbytes) {
    if (i < I->cnt_size[c]) { I->cnt_p[c][i] += 1; I->cnt_b[c][i] += nbytes; }
    return 0;
}
static u64 p4n_random(inst_t *I, u64 lo, u64 hi) {
    if (hi < lo) return lo;
    return lo + (u64)p4n_rand32(I->rng_handle) % (hi - lo + 1);
}
static inline u64 p4n_shl(u64 a, u64 b, int w, u64 m) { return b < (u64)w ? (a << b) & m : 0; }
static inline u64 p4n_shr(u64 a, u64 b, int w) { return b < (u64)w ? a >> b : 0; }
static inline int64_t p4n_sext(u64 v, int w) { return w >= 64 ? (int64_t)v : (int64_t)(v << (64 - w)) >> (64 - w); }
static inline u64 p4n_min63(u64 a) { return a > 63 ? 63 : a; }
static inline u64 p4n_satsigned(int64_t r, int w) {
    int64_t hi = (int64_t)((1ULL << (w - 1)) - 1), lo = -hi - 1;
    r = r > hi ? hi : r < lo ? lo : r;
    return (u64)r & (w >= 64 ? ~0ULL : ((1ULL << w) - 1));
}
static inline u64 p4n_satadd(u64 a, u64 b, u64 m) { u64 r = a + b; return (r > m || r < a) ? m : r; }
static inline u64 p4n_get(const uint8_t *p, int bit, int w) {
    /* w <= 64 bits starting `bit` bits into p, big-endian: at most 9 bytes through a 128-bit window */
    const uint8_t *q = p + (bit >> 3);
    int sh = bit & 7, nb = (sh + w + 7) >> 3;
    unsigned __int128 v = 0;
    for (int i = 0; i < nb; i++) v = (v << 8) | q[i];
    v >>= (nb * 8 - sh - w);
    return w >= 64 ? (u64)v : (u64)v & ((1ULL << w) - 1);
}
static inline void p4n_set(uint8_t *p, int bit, int w, u64 x) {
    /* OR w bits of x into zeroed bytes at `bit` (the deparser clears each header first) */
    uint8_t *q = p + (bit >> 3);
    int sh = bit & 7, nb = (sh + w + 7) >> 3;
    unsigned __int128 v = (unsigned __int128)(w >= 64 ? x : x & ((1ULL << w) - 1)) << (nb * 8 - sh - w);
    for (int i = nb - 1; i >= 0; i--) { q[i] |= (uint8_t)v; v >>= 8; }
}
"""
        for i, x in enumerate(self.regs.values()):
            x.index = i
        e = entry
        hbytes = _header_bytes(v1["H"])
        if hbytes > HEADER_BYTES_MAX:
            raise Unsupported(f"more than {HEADER_BYTES_MAX} bytes of headers")
        hcap = max(1024, (hbytes + 63) // 64 * 64)
        api = f"""
#define P4N_HCAP {hcap}
#define P4N_USES_PAY {1 if self.uses_payload else 0}
int p4n_finish(inst_t *I, job_t *K, uint8_t *o, int cap);
int64_t p4n_parse(inst_t *I, job_t *K, const uint8_t *data, uint32_t n, uint32_t port, uint64_t now) {{
    if (!p4n_tabs_ready) p4n_tabs();
    K->sm.ingress_port = port; K->sm.packet_length = n; K->sm.ingress_global_timestamp = now & 0xFFFFFFFFFFFFULL;
    K->now = now; K->pkt_len = n; K->truncate = -1;
    int off = {e['parser']}(I, K, data, n, &K->hdr, &K->meta, &K->sm);
    if (K->fault) return -1;
    if (K->parser_err > 0) K->sm.parser_error = (u64)K->parser_err;
    K->payload_off = (uint32_t)off;{set_pay}
    {e['verify']}(I, K, &K->hdr, &K->meta);
    return K->fault ? -1 : 0;
}}
int64_t p4n_ingress(inst_t *I, job_t *K, const uint8_t *data, uint32_t n, uint32_t port, uint64_t now) {{
    if (!p4n_tabs_ready) p4n_tabs();
    K->sm.ingress_port = port; K->sm.packet_length = n; K->sm.ingress_global_timestamp = now & 0xFFFFFFFFFFFFULL;
    K->now = now; K->pkt_len = n; K->truncate = -1;
    int off = {e['parser']}(I, K, data, n, &K->hdr, &K->meta, &K->sm);
    if (K->fault) return -1;
    if (K->parser_err > 0) K->sm.parser_error = (u64)K->parser_err;
    K->payload_off = (uint32_t)off;{set_pay}
    {e['verify']}(I, K, &K->hdr, &K->meta);
    if (K->fault) return -1;
    K->exited = 0;
    {e['ingress']}(I, K, &K->hdr, &K->meta, &K->sm);
    K->exited = 0;
    if (K->fault) return -1;
    /* what Python needs, in one int: egress_spec, priority, parser error?, multicast?, truncate set?, payload offset */
    return (int64_t)((K->sm.egress_spec & 0x1FF) | ((K->sm.priority & 7) << 9) | ((uint64_t)(K->parser_err > 0) << 12)
            | ((uint64_t)(K->sm.mcast_grp != 0) << 13) | ((uint64_t)(K->truncate >= 0) << 14)
            | ((uint64_t)(K->clone_type == 1 || K->resubmit) << 15)
            | ((uint64_t)K->payload_off << 16));
}}
int p4n_egress(inst_t *I, job_t *K, uint8_t *o, int cap, uint32_t port, uint64_t now, int qi, uint64_t enq_ts,
               uint64_t enq_qd, uint64_t deq_td, uint64_t deq_qd) {{
    K->sm.egress_port = port; K->sm.egress_spec = 0; K->sm.egress_global_timestamp = now & 0xFFFFFFFFFFFFULL;
    if (!qi) {{ K->sm.enq_timestamp = now & 0xFFFFFFFFULL; K->sm.enq_qdepth = K->sm.deq_timedelta = K->sm.deq_qdepth = 0; }}
    else {{ K->sm.enq_timestamp = enq_ts & 0xFFFFFFFFULL; K->sm.enq_qdepth = enq_qd & 0x7FFFF;
           K->sm.deq_timedelta = deq_td & 0xFFFFFFFFULL; K->sm.deq_qdepth = deq_qd & 0x7FFFF; }}
    K->now = now; K->pkt_len = (uint32_t)K->sm.packet_length;
    K->exited = 0; K->clone_type = 0; K->resubmit = 0;
    {e['egress']}(I, K, &K->hdr, &K->meta, &K->sm);
    K->exited = 0;
    if (K->fault) return -2;
    if (K->clone_type == 2 || K->recirc) return -3;      /* E2E clone / recirculation: Python finishes */
    if (K->sm.egress_spec == 511) return -1;
    return p4n_finish(I, K, o, cap);
}}
int p4n_finish(inst_t *I, job_t *K, uint8_t *o, int cap) {{
    {e['compute']}(I, K, &K->hdr, &K->meta);
    if (K->fault) return -2;
    int len = 0;
    (void)cap;
"""
        dep = rec.controls[e["deparser"]]
        saved = self.out
        self.out = []
        self.ctx_types = self.obj_types(dep.params)
        self.locals = {}
        self.fault_ret = "return -2;"
        dep_lines = [f"    {ct} *{py} = &K->hdr;" for py, ct in self.ctx_types.items()]
        dep_lines += self.stmts(dep.body, "    ")
        self.out = saved
        api += "\n".join(dep_lines) + "\n    return len;\n}\n" + self.field_list_fn() + _BATCH
        cdef_api = """
typedef struct { ...; } p4n_park_t;
int64_t p4n_ingress(inst_t *I, job_t *K, const uint8_t *data, uint32_t n, uint32_t port, uint64_t now);
int p4n_egress(inst_t *I, job_t *K, uint8_t *o, int cap, uint32_t port, uint64_t now, int qi, uint64_t enq_ts,
               uint64_t enq_qd, uint64_t deq_td, uint64_t deq_qd);
int p4n_finish(inst_t *I, job_t *K, uint8_t *o, int cap);
void p4n_field_list(int i, job_t *src, job_t *dst);
int64_t p4n_parse(inst_t *I, job_t *K, const uint8_t *data, uint32_t n, uint32_t port, uint64_t now);
int p4n_batch(inst_t *I, job_t *jobs, int nf, const uint8_t *data, const uint32_t *lens, const uint32_t *ports,
              const uint64_t *nows, uint8_t *out, uint32_t outcap, int64_t *res, uint32_t *stats);
int p4n_switch_batch(inst_t *I, job_t *jobs, int start, int nf, const uint8_t *data, const uint32_t *offs,
                     const uint32_t *lens, const uint32_t *ports, uint64_t now, uint8_t *gate, uint8_t *out,
                     uint32_t outcap, uint32_t *used_io, int64_t *res, uint32_t *tm, uint64_t now_ns,
                     const double *free_at, p4n_park_t *park, int32_t *slots);
int64_t p4n_switch_one(inst_t *I, job_t *jobs, const uint8_t *data, uint32_t n, uint32_t port, uint64_t now,
                       uint8_t *gate, uint8_t *out, uint32_t outcap, uint32_t *tm, uint64_t now_ns,
                       const double *free_at, p4n_park_t *park, int32_t *slots);
p4n_park_t *p4n_park_new(void);
void p4n_park_free(p4n_park_t *P);
void p4n_park_drop(p4n_park_t *P, int32_t s);
job_t *p4n_park_job(p4n_park_t *P, int32_t s);
int32_t p4n_park_used(p4n_park_t *P);
uint32_t p4n_park_port(p4n_park_t *P, int32_t s);
uint8_t *p4n_park_payload(p4n_park_t *P, int32_t s, uint32_t *n);
int64_t p4n_park_serve(inst_t *I, p4n_park_t *P, int32_t s, uint64_t now, uint64_t enq_ts,
                       uint64_t enq_qd, uint64_t deq_td, uint64_t deq_qd, uint8_t *out, uint32_t outcap);
"""
        src = "\n".join(head) + inst + helpers + wide.HELPERS + "\n".join(self.protos) + "\n" + "\n".join(self.out) + api
        cdef = ("typedef uint64_t u64;\n" + _CDEF_RUNTIME + "\n".join(wide.cdef_view(x) for x in self.type_src)
                + inst + cdef_api
                + 'extern "Python" uint32_t p4n_rand32(uint64_t);\n'
                + 'extern "Python" void p4n_digest(uint64_t, int, u64 *, int);\n'
                + 'extern "Python" void p4n_log(uint64_t, int, u64 *, int);\n'
                + 'extern "Python" int p4n_vs_match(uint64_t, int, u64 *, int);\n'
                + 'extern "Python" u64 p4n_meter(uint64_t, int, u64, uint32_t, uint64_t);\n'
                + 'extern "Python" void p4n_entry_hit(uint64_t, int, uint32_t, uint32_t);\n'
                + 'extern "Python" u64 p4n_dmeter(uint64_t, int, uint32_t, uint32_t, uint64_t);\n')
        return CProgram(src, cdef, list(self.regs.values()), list(self.cnts.values()),
                        [(x, rec.tables[f]) for f, x in self.tbls.items()], digests=list(self.digests),
                        log_msgs=list(self.log_msgs), value_sets=list(self.value_sets), meters=list(self.meters), hcap=hcap,
                        uses_payload=self.uses_payload, arg_widths=dict(self.arg_widths))

    def _owner(self, func: str, with_frame: bool = False) -> str | None:
        """The control an action/table belongs to: the compiler gives each control its own prefix, and an
        action/table name carries it: A_<prefix>_x / TA_<prefix>_x vs C_<prefix> (the longest that fits)."""
        best = None
        for c in self.rec.controls:
            stem = c[2:]
            if func.split("_", 1)[1].startswith(stem + "_") and (not with_frame or self.frames.get(c)):
                if best is None or len(stem) > len(best[2:]):
                    best = c
        return best

    def _frame_for(self, ctx_args: list[str], func: str) -> str | None:
        if "L" not in ctx_args:
            return None
        best = self._owner(func, with_frame=True)     # the control whose frame slots the body names
        if best is None:
            raise Unsupported(f"cannot find the control frame of {func}")
        return self.frames[best]

    @staticmethod
    def _runtime() -> str:
        src = resources.files("p4exec.native").joinpath("runtime.c").read_text()
        return ("#include <stdint.h>\nstatic uint32_t p4n_rand32(uint64_t h);\n"
                "static void p4n_digest(uint64_t h, int d, uint64_t *v, int n);\n"
                "static void p4n_log(uint64_t h, int m, uint64_t *v, int n);\n"
                "static int p4n_vs_match(uint64_t h, int s, uint64_t *v, int n);\n"
                "static uint64_t p4n_meter(uint64_t h, int m, uint64_t i, uint32_t nbytes, uint64_t now);\n"
                "static void p4n_entry_hit(uint64_t h, int t, uint32_t seq, uint32_t nbytes);\n"
                "static uint64_t p4n_dmeter(uint64_t h, int t, uint32_t seq, uint32_t nbytes, uint64_t now);\n" + src)


_BATCH = """
/* A batch of frames through ingress and, for unicast, egress with empty queues (V1Pipeline.process's model):
   frames back to back in `data`; per frame res[i] = output length | egress port << 32 (the frame is in `out` in frame order),
   -1 dropped, -2 / -5 run-time fault in ingress / egress (jobs[i].fault says which), -3 multicast (jobs[i] holds the job after
   ingress: Python replicates it), -4 no room left in `out` (jobs[i] holds the job after ingress).
   stats[0] counts frames with a parser error. */
int p4n_finish(inst_t *I, job_t *K, uint8_t *o, int cap);
void p4n_field_list(int i, job_t *src, job_t *dst);
int64_t p4n_parse(inst_t *I, job_t *K, const uint8_t *data, uint32_t n, uint32_t port, uint64_t now);
int p4n_batch(inst_t *I, job_t *jobs, int nf, const uint8_t *data, const uint32_t *lens, const uint32_t *ports,
              const uint64_t *nows, uint8_t *out, uint32_t outcap, int64_t *res, uint32_t *stats) {
    uint32_t in = 0, used = 0;
    for (int i = 0; i < nf; i++) {
        job_t *K = &jobs[i];
        memset(K, 0, sizeof *K);
        const uint8_t *d = data + in;
        uint32_t n = lens[i];
        in += n;
        int64_t r = p4n_ingress(I, K, d, n, ports[i], nows[i]);
        if (r < 0) { res[i] = -2; continue; }
        if (K->parser_err > 0) stats[0]++;
        if (K->sm.mcast_grp || K->clone_type == 1 || K->resubmit || K->recirc) { res[i] = -3; continue; }
        if (K->sm.egress_spec == 511) { res[i] = -1; continue; }
        uint32_t pay = n - K->payload_off;
        if (used + P4N_HCAP + pay > outcap) { res[i] = -4; continue; }
        int len = p4n_egress(I, K, out + used, P4N_HCAP, (uint32_t)K->sm.egress_spec, nows[i], 0, 0, 0, 0, 0);
        if (len == -1) { res[i] = -1; continue; }
        if (len == -3) { res[i] = -6; continue; }
        if (len < 0) { res[i] = -5; continue; }
        memcpy(out + used + len, d + K->payload_off, pay);
        int64_t tot = (int64_t)len + pay;
        if (K->truncate >= 0 && K->truncate < tot) tot = K->truncate;
        used += (uint32_t)tot;
        res[i] = tot | ((int64_t)(K->sm.egress_port & 0x1FF) << 32);
    }
    return (int)used;
}
/* Parked copies: a unicast copy that waits in the traffic manager (gate 3) stays here, its job and its payload,
   while the Python traffic manager's queue holds only its slot number; `p4n_park_serve` runs its egress when it
   leaves (no Python job object, one call out of the queue). Slots are reused through a free list; a payload is
   allocated per copy and freed when it leaves, so a pool holds the memory of what waits now, not of its peak. */
typedef struct {
    job_t *jobs; uint8_t **pay; uint32_t *pay_len; int32_t *next; uint32_t *port;
    int32_t head, cap, used;
} p4n_park_t;
p4n_park_t *p4n_park_new(void) {
    p4n_park_t *P = calloc(1, sizeof *P);
    if (P) P->head = -1;
    return P;
}
void p4n_park_free(p4n_park_t *P) {
    if (!P) return;
    for (int32_t i = 0; i < P->cap; i++) free(P->pay[i]);
    free(P->jobs); free(P->pay); free(P->pay_len); free(P->next); free(P->port); free(P);
}
static int p4n_park_grow(p4n_park_t *P) {
    int32_t cap = P->cap ? 2 * P->cap : 64;
    job_t *jobs = realloc(P->jobs, (size_t)cap * sizeof *jobs);
    if (!jobs) return -1;
    P->jobs = jobs;
    uint8_t **pay = realloc(P->pay, (size_t)cap * sizeof *pay);
    if (!pay) return -1;
    P->pay = pay;
    uint32_t *pl = realloc(P->pay_len, (size_t)cap * sizeof *pl);
    if (!pl) return -1;
    P->pay_len = pl;
    int32_t *nx = realloc(P->next, (size_t)cap * sizeof *nx);
    if (!nx) return -1;
    P->next = nx;
    uint32_t *po = realloc(P->port, (size_t)cap * sizeof *po);
    if (!po) return -1;
    P->port = po;
    for (int32_t i = P->cap; i < cap; i++) {
        P->pay[i] = NULL; P->pay_len[i] = 0;
        P->next[i] = i + 1 < cap ? i + 1 : P->head;
    }
    P->head = P->cap;
    P->cap = cap;
    return 0;
}
/* park job K (its payload: pay[0..n)); the slot, or -1 (no memory: the caller keeps the job in Python) */
static int32_t p4n_park_put(p4n_park_t *P, const job_t *K, const uint8_t *pay, uint32_t n) {
    if (P->head < 0 && p4n_park_grow(P) < 0) return -1;
    int32_t s = P->head;
    uint8_t *b = malloc(n ? n : 1);
    if (!b) return -1;
    P->pay[s] = b;
    P->head = P->next[s];
    memcpy(&P->jobs[s], K, sizeof *K);
    if (n) memcpy(P->pay[s], pay, n);
    P->pay_len[s] = n;
    P->port[s] = (uint32_t)K->sm.egress_spec & 0x1FF;
    P->used++;
    return s;
}
void p4n_park_drop(p4n_park_t *P, int32_t s) {
    if (s < 0 || s >= P->cap) return;
    free(P->pay[s]);
    P->pay[s] = NULL;
    P->next[s] = P->head;
    P->head = s;
    P->used--;
}
/* the parked job and payload of slot s, for Python to finish it (a fault, an E2E clone or recirculation) */
job_t *p4n_park_job(p4n_park_t *P, int32_t s) { return &P->jobs[s]; }
int32_t p4n_park_used(p4n_park_t *P) { return P->used; }
uint32_t p4n_park_port(p4n_park_t *P, int32_t s) { return P->port[s]; }
uint8_t *p4n_park_payload(p4n_park_t *P, int32_t s, uint32_t *n) { *n = P->pay_len[s]; return P->pay[s]; }
/* Slot s leaves its queue: egress at `now` with the queue's metadata, the deparser, its payload after the headers
   and truncation, as NativePipeline._egress_pass does: the frame's length in `out` (the slot is free again), or
   -1 dropped in egress (free), -2 fault and -3 E2E clone / recirculation (the slot still holds the job after
   egress: Python finishes it and frees it), -4 `out` too small (nothing ran). A length comes with the egress port
   (ingress's egress_spec) << 32. */
int64_t p4n_park_serve(inst_t *I, p4n_park_t *P, int32_t s, uint64_t now, uint64_t enq_ts,
                       uint64_t enq_qd, uint64_t deq_td, uint64_t deq_qd, uint8_t *out, uint32_t outcap) {
    job_t *K = &P->jobs[s];
    uint32_t pay = P->pay_len[s];
    uint32_t port = P->port[s];
    if ((uint64_t)P4N_HCAP + pay > outcap) return -4;
#if P4N_USES_PAY
    K->pay = P->pay[s]; K->pay_len = pay;
#endif
    int len = p4n_egress(I, K, out, P4N_HCAP, port, now, 1, enq_ts, enq_qd, deq_td, deq_qd);
    if (len == -1) { p4n_park_drop(P, s); return -1; }
    if (len == -3) return -3;
    if (len < 0) return -2;
    memcpy(out + len, P->pay[s], pay);
    int64_t tot = (int64_t)len + pay;
    if (K->truncate >= 0 && K->truncate < tot) tot = K->truncate;
    p4n_park_drop(P, s);
    return tot | ((int64_t)port << 32);
}
/* The switch loop's batch (p4exec/switch/batch.py): frames start.. (at offs[i] in `data`) all at `now`, each through
   ingress and, where the traffic manager lets a unicast copy leave at once (gate[port] 1: an idle unpaced port, stays
   open; 2: an idle paced port, open for one frame (then 3) once free, i.e. its next departure free_at[port] (clock ns)
   falls within now_ns's nanosecond), egress with the empty queue's metadata; tm[i] = egress
   port | priority << 16 of unicast copies. res[i]: >= 0 as p4n_batch, -1 / -7 dropped in ingress (without / with a
   parser error), -2 fault in ingress, -8 dropped in egress, -5 fault in egress, -9 the copy waits in the traffic
   manager (gate 3: a busy, paced-out or down port; jobs[i] holds it; its egress runs later anyway). Stops at the first
   frame Python must finish now: -3 after ingress (replication, clone, resubmit), -10 gate 0 (ask Python), -4 no room
   in `out` (jobs[i] holds the job after ingress), -6 after egress (E2E clone, recirculation); returns its index (nf:
   none). *used: bytes in `out`. */
int p4n_switch_batch(inst_t *I, job_t *jobs, int start, int nf, const uint8_t *data, const uint32_t *offs,
                     const uint32_t *lens, const uint32_t *ports, uint64_t now, uint8_t *gate, uint8_t *out,
                     uint32_t outcap, uint32_t *used_io, int64_t *res, uint32_t *tm, uint64_t now_ns,
                     const double *free_at, p4n_park_t *park, int32_t *slots) {
    uint32_t used = *used_io;
    int i = start;
    for (; i < nf; i++) {
        job_t *K = &jobs[i];
        memset(K, 0, sizeof *K);
        const uint8_t *d = data + offs[i];
        uint32_t n = lens[i];
        int64_t r = p4n_ingress(I, K, d, n, ports[i], now);
        if (r < 0) { res[i] = -2; continue; }
        if (K->sm.mcast_grp || K->clone_type == 1 || K->resubmit || K->recirc) { res[i] = -3; break; }
        if (K->sm.egress_spec == 511) { res[i] = K->parser_err > 0 ? -7 : -1; continue; }
        uint32_t port = (uint32_t)K->sm.egress_spec & 0x1FF;
        uint8_t g = gate[port];
        tm[i] = port | ((uint32_t)(K->sm.priority & 7) << 16);
        if (g == 3 || (g == 2 && !(free_at[port] < (double)(now_ns + 1)))) {
            res[i] = -9;
            slots[i] = park ? p4n_park_put(park, K, d + K->payload_off, n - K->payload_off) : -1;
            continue;
        }
        if (g != 1 && g != 2) { res[i] = -10; break; }
        uint32_t pay = n - K->payload_off;
        if (used + P4N_HCAP + pay > outcap) { res[i] = -4; break; }
        if (g == 2) gate[port] = 3;
        int len = p4n_egress(I, K, out + used, P4N_HCAP, port, now, 0, 0, 0, 0, 0);
        if (len == -1) { res[i] = -8; continue; }
        if (len == -3) { res[i] = -6; break; }
        if (len < 0) { res[i] = -5; continue; }
        memcpy(out + used + len, d + K->payload_off, pay);
        int64_t tot = (int64_t)len + pay;
        if (K->truncate >= 0 && K->truncate < tot) tot = K->truncate;
        used += (uint32_t)tot;
        res[i] = tot;
    }
    *used_io = used;
    return i;
}
/* One frame that arrived alone (p4exec/switch/batch.py's run_one): p4n_switch_batch of a batch of one, in `jobs[0]`,
   its output at the start of `out`; returns that frame's res (a stop code too: the batch had nothing after it). */
int64_t p4n_switch_one(inst_t *I, job_t *jobs, const uint8_t *data, uint32_t n, uint32_t port, uint64_t now,
                       uint8_t *gate, uint8_t *out, uint32_t outcap, uint32_t *tm, uint64_t now_ns,
                       const double *free_at, p4n_park_t *park, int32_t *slots) {
    uint32_t off = 0, used = 0;
    int64_t res = 0;
    p4n_switch_batch(I, jobs, 0, 1, data, &off, &n, &port, now, gate, out, outcap, &used, &res, tm, now_ns, free_at,
                     park, slots);
    return res;
}
"""

_CDEF_RUNTIME = """
#define P4N_MAXK 8
#define P4N_MAXA 16
typedef struct { ...; } p4n_table;
p4n_table *p4n_table_new(int nk, int prio_mode);
void p4n_table_clear(p4n_table *t);
void p4n_table_free(p4n_table *t);
int p4n_table_add(p4n_table *t, const u64 *val, const u64 *mask, int32_t prio, uint32_t seq, int32_t action,
                  int32_t group, const u64 *args, int nargs);
void p4n_table_finish(p4n_table *t);
void p4n_table_set_default(p4n_table *t, int32_t action, const u64 *args, int nargs);
void p4n_table_range(p4n_table *t, int k, u64 lo, u64 hi);
void p4n_table_set_selectors(p4n_table *t, int nsel, const int32_t *off, const int32_t *len, int nmem,
                             const int32_t *actions, const u64 *args);
"""


def _header_bytes(t: T.Type) -> int:
    b = T.strip_new(t)
    if isinstance(b, T.HeaderT):      # a varbit field at its maximum
        return (b.width + sum(t.width for t in map(T.strip_new, b.fields.values()) if isinstance(t, T.Varbit))
                + 7) // 8
    if isinstance(b, T.StructT):
        return sum(_header_bytes(ft) for ft in b.fields.values())
    return 0


def _header_leaves(h: T.HeaderT | T.StructT, prefix: str = "") -> list[tuple[str, int]]:
    """A header's scalar leaves in wire order as (C member path, width): a struct-typed field contributes its
    own fields in order (the path's members already C names, so `_cf` leaves it unchanged)."""
    out: list[tuple[str, int]] = []
    for f, ft in h.fields.items():
        sub = T.strip_new(ft)
        if isinstance(sub, T.StructT):
            out += _header_leaves(sub, f"{prefix}{_cf(f)}.")
        else:
            out.append((prefix + _cf(f), _vw(ft)))
    return out


def _obj_eq_c(a: str, b: str, t: T.Type) -> str:
    """C testing the objects `a` and `b` of type `t` equal: headers equal when both invalid or both valid with
    equal fields, unions member by member, stacks element by element (not their next index), structs by fields."""
    x = T.strip_new(t)
    if isinstance(x, T.StackT):
        parts = [_obj_eq_c(f"{a}.h[{i}]", f"{b}.h[{i}]", x.elem) for i in range(x.size)]
    elif isinstance(x, T.HeaderT | T.StructT | T.UnionT):
        parts = [_obj_eq_c(f"{a}.{_cf(f)}", f"{b}.{_cf(f)}", ft) if _is_obj(ft) else f"({a}.{_cf(f)} == {b}.{_cf(f)})"
                 for f, ft in x.fields.items()]
        if isinstance(x, T.HeaderT):
            return f"({a}._v == {b}._v && (!{a}._v || {' && '.join(parts) or '1'}))"
    else:
        raise Unsupported(f"equality of {t}")
    return "(" + (" && ".join(parts) or "1") + ")"


def generate(prog: Any) -> CProgram:
    return CGen(prog).generate()
