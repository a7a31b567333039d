"""The typed expression IR: what the checker (expressions.py, operators.py) decides about an expression, before
any Python exists.

Every node carries its checked P4 type; constants are folded by the checker into `Const` nodes (a constant *name*
stays a `Name`, its value is on the checked expression `symbols.E.const`); an l-value is a node the checker marks
assignable (`symbols.LV` holds it). The nodes say *what* is computed, with the P4 semantics made explicit (wrap-around
arithmetic is `Arith`, a division whose divisor may be zero at run time is `Div(checked=True)`, a copy of a
header/struct value is `Copy`); exprgen.py alone decides *how* that reads in Python.

`Opaque` holds Python code the checker's callers still produce themselves (calls, extern and header methods): the
part of the compiler that is still fused (see docs/p4exec-compiler.md).
"""
from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from p4exec.compiler import types as T


@dataclass(frozen=True, slots=True)
class Expr:
    type: T.Type


@dataclass(frozen=True, slots=True)
class Opaque(Expr):
    """Python code generated outside the IR (calls and methods); '' for a value that is only a marker."""

    code: str


@dataclass(frozen=True, slots=True)
class Const(Expr):
    """A compile-time value: int, bool or str."""

    value: Any


@dataclass(frozen=True, slots=True)
class Name(Expr):
    """A variable, parameter, constant, table or instance, by its Python name."""

    py: str


@dataclass(frozen=True, slots=True)
class Field(Expr):
    """`base.name` of a header, struct or union."""

    base: Expr
    name: str


@dataclass(frozen=True, slots=True)
class StackElem(Expr):
    """`stack[index]`, the index checked in range at compile time."""

    base: Expr
    index: int


@dataclass(frozen=True, slots=True)
class StackElemDyn(Expr):
    """`stack[index]` with a run-time index (a fault when out of range)."""

    base: Expr
    index: Expr


@dataclass(frozen=True, slots=True)
class StackNext(Expr):
    """`stack.next` in a parser."""

    base: Expr


@dataclass(frozen=True, slots=True)
class StackLast(Expr):
    """`stack.last` in a parser."""

    base: Expr


@dataclass(frozen=True, slots=True)
class StackLastIndex(Expr):
    """`stack.lastIndex` in a parser (bit<32>)."""

    base: Expr


@dataclass(frozen=True, slots=True)
class TupleItem(Expr):
    base: Expr
    index: int


@dataclass(frozen=True, slots=True)
class ApplyResult(Expr):
    """`t.apply().hit` / `.miss` / `.action_run`."""

    base: Expr
    member: str


@dataclass(frozen=True, slots=True)
class IsValid(Expr):
    """`h.isValid()` of a header, or of a union (valid when one member is)."""

    base: Expr
    union: bool


@dataclass(frozen=True, slots=True)
class Slice(Expr):
    """`base[hi:lo]` of a bit<W>/int<W> value (type bit<hi-lo+1>); an l-value when base is one."""

    base: Expr
    hi: int
    lo: int


@dataclass(frozen=True, slots=True)
class Copy(Expr):
    """A copy of a header/struct value about to be stored (P4 has value semantics)."""

    value: Expr


@dataclass(frozen=True, slots=True)
class Tuple(Expr):
    """A tuple (or an uncoerced list expression) of items, left to right."""

    items: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Make(Expr):
    """A header or struct value built from its fields in declaration order; `cls` is its generated class."""

    cls: str
    items: tuple[Expr, ...]


def is_constant_aggregate(n: Expr) -> bool:
    """A struct or tuple value whose every leaf is a compile-time constant (a struct-typed `const`)."""
    if not isinstance(n, Make | Tuple):
        return False
    return all(isinstance(i, Const) or is_constant_aggregate(i) for i in n.items)


@dataclass(frozen=True, slots=True)
class Initializer(Expr):
    """A list or struct initializer not yet given a type by its context (only its items are checked)."""

    items: Any = field(default=None)


@dataclass(frozen=True, slots=True)
class Cond(Expr):
    cond: Expr
    then: Expr
    other: Expr


@dataclass(frozen=True, slots=True)
class Not(Expr):
    operand: Expr


@dataclass(frozen=True, slots=True)
class Neg(Expr):
    """`-x` of bit<W>/int<W>, wrapped to the type."""

    operand: Expr


@dataclass(frozen=True, slots=True)
class Complement(Expr):
    operand: Expr


@dataclass(frozen=True, slots=True)
class Logical(Expr):
    """`&&` / `||`, short-circuit."""

    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True)
class Compare(Expr):
    """`==`, `!=`, `<`, ... of scalars (type bool)."""

    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True)
class ObjEq(Expr):
    """`==` / `!=` of headers, structs, unions or stacks (field by field)."""

    negate: bool
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True)
class Arith(Expr):
    """`+`, `-`, `*` of bit<W>/int<W>, wrapped modulo 2^W."""

    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True)
class Bitwise(Expr):
    """`&`, `|`, `^`."""

    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True)
class Div(Expr):
    """`/`, `%` of unsigned values; `checked` when the divisor may be zero at run time (a fault then)."""

    op: str
    left: Expr
    right: Expr
    checked: bool


@dataclass(frozen=True, slots=True)
class SatArith(Expr):
    """`|+|`, `|-|`: saturating."""

    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True)
class ShiftRight(Expr):
    """`>>`; `amount` is the constant amount or None for a run-time one."""

    left: Expr
    right: Expr
    amount: int | None


@dataclass(frozen=True, slots=True)
class ShiftLeft(Expr):
    """`<<` (amounts at or past the width were folded to 0 by the checker); `amount` as in ShiftRight."""

    left: Expr
    right: Expr
    amount: int | None


@dataclass(frozen=True, slots=True)
class Concat(Expr):
    """`a ++ b` (type bit/int of both widths, the left operand's signedness)."""

    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True)
class Cast(Expr):
    """A cast that changes the representation: bool -> bit<1>, bit<1> -> bool, between bit/int widths or
    signedness (casts that change only the type name are the operand itself, retyped)."""

    operand: Expr


@dataclass(frozen=True, slots=True)
class As(Expr):
    """The same number at another type: a cast that needs no conversion (bit<8> to bit<16>)."""

    operand: Expr


@dataclass(frozen=True, slots=True)
class CallArg:
    """One argument of a call. Without `temp` the callee gets `value` (an l-value for a scalar out/inout, whose
    new value comes back in the result tuple; a copy or a fresh default for an object). With `temp` (a
    header/struct out/inout of an action that also reaches outer state) it is copied in: `temp = value` before the
    call, the callee gets `temp`, and `target` is set from `temp` after the call, even when the callee exits."""

    value: Expr
    temp: str = ""
    target: Expr | None = None


@dataclass(frozen=True, slots=True)
class CallPlan:
    """A call of a generated function with P4's copy-in/copy-out order made explicit: arguments evaluated left to
    right (`args`, after `prefix_args`, the control's context), object copy-ins into temps first, the call, the
    object copy-outs, then each scalar out/inout l-value in `outs` (None for a don't-care) assigned, in parameter
    order, from item `out_offset + i` of the result tuple held in `result`. `may_exit`: the callee may `exit`;
    its out values then travel on the exit exception and are copied out before unwinding further."""

    func: str
    prefix_args: str
    args: tuple[CallArg, ...]
    outs: tuple[Expr | None, ...]
    result: str
    out_offset: int
    may_exit: bool


@dataclass(frozen=True, slots=True)
class Call(Expr):
    """The value of a call (of a function returning one) whose plan has no scalar out/inout arguments."""

    plan: CallPlan


@dataclass(frozen=True, slots=True)
class OutCall(Expr):
    """The value of a call with scalar out/inout arguments inside an expression: `helper` (defined by a
    CallHelper statement just before the statement) takes the callee's result tuple, copies out and returns the
    value, so the copy-out happens when Python evaluates the call, left to right among the operands."""

    plan: CallPlan
    helper: str


@dataclass(frozen=True, slots=True)
class TableApply(Expr):
    """`t.apply()` of a table (its generated function `func`, called with the control's context `ctx_args`);
    its type is the apply result (`hit`, `miss`, `action_run` are ApplyResult nodes over it)."""

    func: str
    ctx_args: str


@dataclass(frozen=True, slots=True)
class ExternCall(Expr):
    """A method of a v1model extern instance, `extern.method(args)` on `receiver`: counter.count(index),
    meter.execute_meter(index) (its value is the colour; the result argument is the Assign around it),
    register.read(index) (likewise) and register.write(index, value). Indices are of the declared type."""

    extern: str
    method: str
    receiver: Expr
    args: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Lookahead(Expr):
    """`pkt.lookahead<T>()`: the next `width` bits of the packet, not consumed, as a bit/int value or a
    header/struct of generated class `cls`."""

    width: int
    cls: str = ""


@dataclass(frozen=True, slots=True)
class Random(Expr):
    """`random(result, lo, hi)`'s value: uniform in lo..hi, both included (the Assign around it stores it)."""

    lo: Expr
    hi: Expr


@dataclass(frozen=True, slots=True)
class Truncated(Expr):
    """The low bits of `operand` at this node's (unsigned) width: a signed field's bits, a checksum result."""

    operand: Expr


@dataclass(frozen=True, slots=True)
class VarbitValue(Expr):
    """The current value of a varbit<N> (as bits of its current length)."""

    operand: Expr


@dataclass(frozen=True, slots=True)
class VarbitLength(Expr):
    """The current length in bits of a varbit<N>."""

    operand: Expr


FieldWidth = int | Expr      # a field list item's width: known, or a varbit's current length


@dataclass(frozen=True, slots=True)
class Packed(Expr):
    """The bytes of a field list as BMv2 lays them out (values MSB first, concatenated, zero padding to a whole
    byte), then the packet's payload when `payload` (the *_with_payload checksums). Bytes are no P4 value: the
    node's type is void; only HashBytes reads it."""

    fields: tuple[tuple[Expr, FieldWidth], ...]
    payload: bool = False


@dataclass(frozen=True, slots=True)
class Csum16(Expr):
    """csum16 of a fixed-width field list computed on its integer value, without building bytes (the one's
    complement sum of 16-bit words is the value modulo 0xFFFF)."""

    fields: tuple[tuple[Expr, int], ...]


@dataclass(frozen=True, slots=True)
class HashBytes(Expr):
    """A hash algorithm's function (`func`, from the runtime) over packed bytes."""

    func: str
    data: Expr


@dataclass(frozen=True, slots=True)
class Hash(Expr):
    """`hash(result, algo, base, data, max)`'s value: base + (value mod max), max 0 read as 1, at the result's
    width; `max_const` when max is a compile-time constant."""

    value: Expr
    base: Expr
    max: Expr
    max_const: int | None


@dataclass(frozen=True, slots=True)
class HashRandom(Expr):
    """`hash` with HashAlgorithm.random: uniform in base .. base + max - 1 (base when max is 0)."""

    base: Expr
    max: Expr


@dataclass(frozen=True, slots=True)
class PacketLength(Expr):
    """`pkt.length()` in a parser (bit<32>)."""


@dataclass(frozen=True, slots=True)
class Assign:
    """Statement `target = value` of a scalar or tuple l-value (a slice writes back its bits)."""

    target: Expr
    value: Expr


@dataclass(frozen=True, slots=True)
class SetObject:
    """Statement `target = value` of a header, struct, union or stack: copied into the existing object (objects
    are never replaced during a packet, so references bound to locals stay valid)."""

    target: Expr
    value: Expr


@dataclass(frozen=True, slots=True)
class CallStmt:
    """A call statement (action, void function, control apply): copy-in, the call and copy-out as `plan` orders
    them; the call's value, if any, is dropped."""

    plan: CallPlan


@dataclass(frozen=True, slots=True)
class Local:
    """Declaration of a local variable (Python name `py`), initialised to `value` (the type's default value
    when the declaration has no initializer)."""

    py: str
    value: Expr


@dataclass(frozen=True, slots=True)
class Return:
    """`return` from an action, control, or function. `value` for a function with a result; `outs`, the Python
    names of the scalar out/inout parameters, travel back with it (the caller copies them out)."""

    value: Expr | None
    outs: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Exit:
    """`exit`: stops the pipeline block (copy-out of the callers' out parameters happens while it unwinds)."""


@dataclass(frozen=True, slots=True)
class Pass:
    """An empty statement (or a block with no statements)."""


@dataclass(frozen=True, slots=True)
class Block:
    """Statements in order (the scope of a P4 block is the checker's business; Python needs none)."""

    body: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class If:
    """`if (c1) b1 else if (c2) b2 ... else other`: an else-if chain is one node (arms in order), so the
    generated code stays flat; `other` is None without an `else`."""

    arms: tuple[tuple[Expr, tuple[Stmt, ...]], ...]
    other: tuple[Stmt, ...] | None


@dataclass(frozen=True, slots=True)
class Eval:
    """An expression statement: `value` is computed and dropped (a table apply or a value-returning call)."""

    value: Expr


@dataclass(frozen=True, slots=True)
class CallHelper:
    """Definition of the helper of an OutCall in the statement that follows (see OutCall)."""

    helper: str
    plan: CallPlan


@dataclass(frozen=True, slots=True)
class SetValidity:
    """`h.setValid()` / `h.setInvalid()`; `invalidate`: the other members of the union `h` is in, which
    setValid makes invalid first."""

    header: Expr
    valid: bool
    invalidate: tuple[Expr, ...] = ()


@dataclass(frozen=True, slots=True)
class StackShift:
    """`stack.push_front(count)` / `stack.pop_front(count)` (op is the method name; count a constant)."""

    stack: Expr
    op: str
    count: int


@dataclass(frozen=True, slots=True)
class ParserApply:
    """`sub.apply(packet, args...)` in a parser state: the sub-parser continues at the current offset and
    returns the new one (after its scalar out values, which `plan` copies out; on reject it raises)."""

    plan: CallPlan


@dataclass(frozen=True, slots=True)
class Emit:
    """`packet_out.emit(header)`: appended when valid. An emit of a struct, union or stack is one Emit per
    header inside it, in order. A header value that is not a plain path is evaluated once into `tmp`."""

    header: Expr
    out: Expr
    tmp: str = ""


@dataclass(frozen=True, slots=True)
class Extract:
    """`pkt.extract(header)` / `pkt.extract(header, bits)` in a parser: the header's bits from the packet, then
    valid; PacketTooShort when the packet ends first. With `stack`, `header` is `stack.next` (StackOutOfBounds
    when full) or, with `member`, that member of the next union (`union_others`: its other members, made
    invalid). Otherwise `invalidate` are the other members of the union `header` is in. With `length` (a
    varbit header), the varbit field's size in bits (at most `length_max`, a whole number of bytes)."""

    header: Expr
    stack: Expr | None = None
    member: str = ""
    union_others: tuple[str, ...] = ()
    invalidate: tuple[Expr, ...] = ()
    length: Expr | None = None
    length_max: int = 0


@dataclass(frozen=True, slots=True)
class Advance:
    """`pkt.advance(bits)` in a parser."""

    bits: Expr


@dataclass(frozen=True, slots=True)
class MarkToDrop:
    """`mark_to_drop(sm)`: egress_spec to BMv2's drop port 511, no multicast group."""

    sm: Expr


@dataclass(frozen=True, slots=True)
class Verify:
    """`verify(cond, error)` in a parser: when cond is false the parser rejects with that error."""

    cond: Expr
    error: Expr


@dataclass(frozen=True, slots=True)
class Assert:
    """`assert(cond)` / `assume(cond)`: a failed one is a run-time fault naming the source location `where`."""

    cond: Expr
    where: str


@dataclass(frozen=True, slots=True)
class Clone:
    """`clone(type, session)` / `clone_preserving_field_list(...)`: `e2e` for CloneType.E2E; `field_list` is
    the generated function copying the preserved fields ('' for none)."""

    e2e: bool
    session: Expr
    field_list: str = ""


@dataclass(frozen=True, slots=True)
class Requeue:
    """`resubmit*` (`recirculate` False) or `recirculate*`, with the preserved fields' function."""

    recirculate: bool
    field_list: str


@dataclass(frozen=True, slots=True)
class Truncate:
    """`truncate(length)`: the packet is cut to `length` bytes when it leaves."""

    length: Expr


@dataclass(frozen=True, slots=True)
class VerifyChecksum:
    """`verify_checksum*(cond, data, field, algo)`: when cond holds and `value` (the computed checksum) differs
    from `field`, standard_metadata.checksum_error is set. update_checksum is an If around an Assign."""

    cond: Expr
    value: Expr
    field: Expr


@dataclass(frozen=True, slots=True)
class Digest:
    """`digest<T>(receiver, data)`: the values of T's fields, in order, sent as digest `name`."""

    name: str
    values: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Log:
    """`log_msg(msg, data)`: the message with the flattened data values."""

    msg: Expr
    values: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class OutsOnExit:
    """The body of an action or control with scalar out/inout parameters `outs`: when it exits, their values
    travel on the exit exception, so each caller copies them out before unwinding (P4_16: copy-out happens on
    exit too)."""

    outs: tuple[str, ...]
    body: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class SwitchArm:
    """Labels sharing one body (P4's fall-through `a: b: {...}`); an empty body does nothing."""

    labels: tuple[Expr, ...]
    body: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class Switch:
    """`switch (value) {...}`: `value` is evaluated once into the temp `tmp`, then compared with each arm's
    labels in order (constants of the value's type, or for `t.apply().action_run` the actions' names); the
    default body, if any, runs when no arm matches (None: no default, or a default without a body)."""

    tmp: str
    value: Expr
    arms: tuple[SwitchArm, ...]
    default: tuple[Stmt, ...] | None


@dataclass(frozen=True, slots=True)
class For:
    """`for (init; cond; updates) body` after `init` (its own statements, before this node). `cond` None runs
    until `break`. With updates, the temp `first` skips them before the first test, so `continue` runs them
    too; without updates the loop is a plain `while`."""

    cond: Expr | None
    updates: tuple[Stmt, ...]
    first: str
    body: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class ForRange:
    """`for (T var in lo .. hi) body`: both ends included."""

    var: str
    lo: Expr
    hi: Expr
    body: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class ForStack:
    """`for (T var in stack) body`: every element of the stack in index order, `var` a copy of it (the
    element is held in the temp `item`)."""

    var: str
    item: str
    stack: Expr
    body: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class ForList:
    """`for (T var in {a, b, ...}) body`: the values, evaluated once before the loop, in order."""

    var: str
    items: tuple[Expr, ...]
    body: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class Break:
    """`break` out of the innermost loop."""


@dataclass(frozen=True, slots=True)
class Continue:
    """`continue` with the innermost loop's next iteration (its updates first)."""


Stmt = (Assign | SetObject | CallStmt | Local | Return | Exit | Pass | Block | If | Switch | For | ForRange
        | ForStack | ForList | Break | Continue | Eval | CallHelper | SetValidity | StackShift | ParserApply | Emit
        | Advance | OutsOnExit | MarkToDrop | Verify | Assert | Clone | Requeue | Truncate
        | VerifyChecksum | Digest | Log | Extract)
STATEMENTS: tuple[type, ...] = typing.get_args(Stmt)


def python_names(node: Any) -> Iterator[str]:
    """Every Python name or code string the IR below `node` (a node, plan or tuple of them) holds: variable
    names, call contexts, functions. The checker asks it what a body reaches (see tables.action_decl)."""
    return (x for x in walk(node) if isinstance(x, str))


def walk(node: Any) -> Iterator[Any]:
    """`node` and every node, plan and tuple below it, top-down."""
    yield node
    if isinstance(node, tuple):
        for x in node:
            yield from walk(x)
    elif dataclasses.is_dataclass(node) and type(node).__module__ == __name__:
        for f in dataclasses.fields(node):
            if f.name != "type":
                yield from walk(getattr(node, f.name))


def has_effects(node: Any) -> bool:
    """Whether evaluating the IR below `node` can change state: a call with out/inout arguments, a table apply or
    an extern method (a function without out arguments changes nothing but its own locals)."""
    if isinstance(node, OutCall | TableApply | ExternCall):
        return True
    if isinstance(node, tuple):
        return any(has_effects(x) for x in node)
    if dataclasses.is_dataclass(node) and type(node).__module__ == __name__:
        return any(has_effects(getattr(node, f.name)) for f in dataclasses.fields(node) if f.name != "type")
    return False


def rewrite(node: Any, fn: Callable[[Any], Any]) -> Any:
    """`node` with each sub-node for which `fn` returns a replacement (not None) replaced, top-down; unchanged
    parts are shared (the IR is immutable)."""
    r = fn(node)
    if r is not None:
        return r
    if isinstance(node, tuple):
        items = tuple(rewrite(x, fn) for x in node)
        return items if any(a is not b for a, b in zip(items, node, strict=True)) else node
    if dataclasses.is_dataclass(node) and type(node).__module__ == __name__:
        changes = {}
        for f in dataclasses.fields(node):
            if f.name != "type":
                v = getattr(node, f.name)
                nv = rewrite(v, fn)
                if nv is not v:
                    changes[f.name] = nv
        return dataclasses.replace(node, **changes) if changes else node  # type: ignore[type-var]
    return node


def retype(node: Expr, t: T.Type) -> Expr:
    """The same value seen at another type: a `type`/`typedef` of the node's own type, or a no-op cast (As)."""
    if node.type is t:
        return node
    if T.same_type(T.strip_new(node.type), T.strip_new(t)):
        return _replace(node, t)
    return As(t, node)


def _replace(node: Expr, t: T.Type) -> Expr:
    vals = {f: getattr(node, f) for f in node.__dataclass_fields__}
    vals["type"] = t
    return type(node)(**vals)
