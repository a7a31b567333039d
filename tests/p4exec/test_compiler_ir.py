"""The typed expression IR on its own: the checker (expressions.py, operators.py) turns P4 expressions into tir
nodes — types, folded constants, l-values — without generating anything, and the generator (exprgen.py) turns
hand-built nodes into Python whose value is checked by running it."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from p4exec.compiler import exprgen, tir
from p4exec.compiler import types as T
from p4exec.compiler.compile import Compiler
from p4exec.compiler.emit import Emitter
from p4exec.compiler.faults import P4Fault
from p4exec.compiler.symbols import Ctx, E, Sym
from p4exec.errors import P4Error
from p4exec.frontend import ast as A
from p4exec.frontend.parser import parse_source

TYPES = """
header h_t { bit<8> a; bit<4> b; bit<4> c; }
struct s_t { h_t h; bit<16> n; }
const bit<8> K = 8w7;
"""
U8, U16, I8 = T.Bits(8), T.Bits(16), T.Bits(8, signed=True)


def _checker(variables: dict[str, tuple[str, str]]) -> Compiler:
    """A compiler whose declarations are checked, with `variables` (name -> (P4 type, direction)) in scope."""
    c = Compiler(parse_source(TYPES, "<ir>"), "<ir>")
    with pytest.raises(P4Error, match="no 'main'"):
        c.run()                         # declarations are checked first; a program without main stops after them
    c.st.push()
    for name, (tname, direction) in variables.items():
        c.st.declare(name, Sym("param", _type(c, tname), py=f"v_{name}", direction=direction), None)
    return c


def _type(c: Compiler, tname: str) -> T.Type:
    if tname.startswith(("bit<", "int<")):
        return T.Bits(int(tname[4:-1]), tname.startswith("int"))
    if tname.endswith("]"):
        elem, size = tname[:-1].split("[")
        return T.StackT(c.st.types[elem], int(size))
    return c.st.types[tname]


def _expr_ast(text: str) -> A.Expr:
    prog = parse_source(f"{TYPES}\nbit<8> probe() {{ return {text}; }}\n", "<ir>")
    fn = prog.decls[-1]
    assert isinstance(fn, A.FunctionDecl)
    ret = fn.body.stmts[0]
    assert isinstance(ret, A.Return) and ret.value is not None
    return ret.value


VARS = {"x": ("bit<8>", "inout"), "y": ("bit<8>", "in"), "s": ("int<8>", "inout"), "hdr": ("h_t", "inout"),
        "st": ("s_t", "inout"), "hs": ("h_t[4]", "inout"), "i": ("bit<2>", "in")}


def check(text: str) -> E:
    c = _checker(VARS)
    return c.exprs.expr(_expr_ast(text))


def test_arithmetic_is_a_typed_node_over_typed_operands() -> None:
    e = check("x + 8w3")
    assert e.node == tir.Arith(U8, "+", tir.Name(U8, "v_x"), tir.Const(U8, 3))
    assert e.type == U8 and e.const is None


def test_constants_are_folded_by_the_checker() -> None:
    e = check("8w250 + 8w10")
    assert e.node == tir.Const(U8, 4) and e.const == 4
    k = check("K")                           # a constant name keeps its name, the value is on the expression
    assert isinstance(k.node, tir.Name) and k.node.type == U8
    assert k.const == 7
    assert check("x << 8").node == tir.Const(U8, 0)     # shifted past the width


def test_l_values_are_marked_by_the_checker() -> None:
    f = check("hdr.a")
    assert isinstance(f.node, tir.Field) and (f.node.type, f.node.name) == (U8, "a")
    assert isinstance(f.node.base, tir.Name) and f.node.base.py == "v_hdr"
    assert isinstance(f.node.base.type, T.HeaderT) and f.node.base.type.name == "h_t"
    assert f.lv is not None and f.lv.node == f.node
    assert check("y").lv is None                        # an `in` parameter is not assignable
    sl = check("x[6:3]")
    assert sl.node == tir.Slice(T.Bits(4), tir.Name(U8, "v_x"), 6, 3) and sl.lv is not None
    nested = check("st.h.b")
    assert isinstance(nested.node, tir.Field) and isinstance(nested.node.base, tir.Field)


def test_stack_indices_division_and_casts_make_their_semantics_explicit() -> None:
    assert isinstance(check("hs[2].a").node.base, tir.StackElem)    # type: ignore[attr-defined]
    dyn = check("hs[i].a").node.base                                 # type: ignore[attr-defined]
    assert isinstance(dyn, tir.StackElemDyn) and dyn.index == tir.Name(T.Bits(2), "v_i")
    assert check("x / y").node == tir.Div(U8, "/", tir.Name(U8, "v_x"), tir.Name(U8, "v_y"), checked=True)
    assert check("x / 8w2").node == tir.Div(U8, "/", tir.Name(U8, "v_x"), tir.Const(U8, 2), checked=False)
    widen = check("(bit<16>)x")
    assert widen.node == tir.As(U16, tir.Name(U8, "v_x"))           # same number, no conversion
    narrow = check("(bit<4>)x")
    assert narrow.node == tir.Cast(T.Bits(4), tir.Name(U8, "v_x"))
    assert check("(int<8>)x").node == tir.Cast(I8, tir.Name(U8, "v_x"))
    assert check("x == y ? x : y").node == tir.Cond(
        U8, tir.Compare(T.BOOL, "==", tir.Name(U8, "v_x"), tir.Name(U8, "v_y")),
        tir.Name(U8, "v_x"), tir.Name(U8, "v_y"))


def test_checker_errors_are_located() -> None:
    with pytest.raises(P4Error, match=r"<ir>:6:25: error: operands of .\+. have different types"):
        check("x + 16w1")
    with pytest.raises(P4Error, match="division by zero"):
        check("x / 8w0")


def test_checked_expression_code_is_the_generators_rendering_of_its_node() -> None:
    for text in ("x + 8w3", "x[6:3]", "(int<8>)x", "hs[i].a ++ x", "s >> 9", "x |+| y", "hdr == hdr"):
        e = check(text)
        assert e.code == exprgen.code(e.node)


# ------------------------------------------------------------------ the generator from hand-built IR
def run(node: tir.Expr, **env):
    def _fault(reason):
        raise P4Fault(reason)

    return eval(exprgen.code(node), {"_fault": _fault}, env)     # noqa: S307 - generated from our own nodes


def name(t: T.Type, py: str) -> tir.Name:
    return tir.Name(t, py)


def test_generator_wraps_arithmetic_to_the_node_type() -> None:
    assert run(tir.Arith(U8, "+", name(U8, "a"), tir.Const(U8, 10)), a=250) == 4
    assert run(tir.Arith(I8, "+", name(I8, "a"), tir.Const(I8, 10)), a=120) == -126
    assert run(tir.Neg(U8, name(U8, "a")), a=1) == 255
    assert run(tir.Complement(U8, name(U8, "a")), a=0x0f) == 0xf0
    assert run(tir.SatArith(U8, "|+|", name(U8, "a"), name(U8, "b")), a=200, b=100) == 255
    assert run(tir.SatArith(U8, "|-|", name(U8, "a"), name(U8, "b")), a=20, b=100) == 0


def test_generator_shifts_concatenation_slices_and_casts() -> None:
    a = name(I8, "a")
    assert run(tir.ShiftRight(I8, a, tir.Const(T.INFINT, 9), 9), a=-5) == -1
    assert run(tir.ShiftLeft(U8, name(U8, "a"), tir.Const(T.INFINT, 4), 4), a=0x1f) == 0xf0
    cat = tir.Concat(U16, name(U8, "a"), name(I8, "b"))
    assert run(cat, a=0x12, b=-1) == 0x12ff
    assert run(tir.Slice(T.Bits(4), name(U8, "a"), 7, 4), a=0xab) == 0xa
    assert run(tir.Cast(I8, name(U8, "a")), a=0xff) == -1
    assert run(tir.Cast(T.Bits(4), name(U8, "a")), a=0xab) == 0xb
    assert run(tir.Cast(T.BOOL, name(T.Bits(1), "a")), a=1) is True
    assert run(tir.As(U16, name(U8, "a")), a=7) == 7


def test_generator_division_by_a_run_time_zero_is_a_fault() -> None:
    div = tir.Div(U8, "/", name(U8, "a"), name(U8, "b"), checked=True)
    assert run(div, a=9, b=2) == 4
    with pytest.raises(P4Fault, match="division_by_zero"):
        run(div, a=9, b=0)


def test_generator_assigns_a_slice_by_writing_back_its_bits() -> None:
    lv = tir.Slice(T.Bits(4), name(U8, "a"), 5, 2)
    lines = exprgen.assign(lv, "v")
    env = {"a": 0xff, "v": 0b0101}
    exec("\n".join(lines), {}, env)       # noqa: S102 - generated from our own nodes
    assert env["a"] == 0b11010111
    signed = tir.Slice(T.Bits(4), name(I8, "s"), 7, 4)
    env = {"s": 0, "v": 0xf}
    exec("\n".join(exprgen.assign(signed, "v")), {}, env)     # noqa: S102
    assert env["s"] == -16


# ------------------------------------------------------------------ calls: copy-in/copy-out as a plan
CALLEE = "void g(inout bit<8> a, out bit<8> b, in bit<8> c, out h_t d, inout h_t e) { }"


def plan(call_text: str, copy_objects: bool = False) -> tir.CallPlan:
    c = _checker(VARS)
    prog = parse_source(f"{TYPES}\n{CALLEE}\n", "<ir>")
    g = prog.decls[-1]
    assert isinstance(g, A.FunctionDecl)
    call = _expr_ast(call_text)
    assert isinstance(call, A.Call)
    return c.calls.plan_call(call, g.proto.params, "f_g", "call of g", copy_objects=copy_objects)


def test_checker_plans_copy_in_and_copy_out_in_parameter_order() -> None:
    p = plan("g(x, hdr.a, y + 8w1, hdr, hdr)")
    assert p.func == "f_g" and not p.may_exit
    assert [type(a.value) for a in p.args] == [tir.Name, tir.Field, tir.Arith, tir.Name, tir.Name]
    assert all(not a.temp for a in p.args)        # objects by reference when the callee reaches nothing else
    assert p.outs == (tir.Name(U8, "v_x"), p.args[1].value)      # scalar out/inout l-values, in order
    assert p.result                              # the result tuple's temp
    copied = plan("g(x, hdr.a, y, hdr, hdr)", copy_objects=True)
    d, e = copied.args[3], copied.args[4]
    assert d.temp and e.temp and d.temp != e.temp
    assert isinstance(e.value, tir.Copy) and isinstance(d.value, tir.Opaque)   # inout copied in, out a default
    assert d.target == e.target and isinstance(d.target, tir.Name) and d.target.py == "v_hdr"


def test_checker_rejects_a_non_l_value_for_an_out_parameter() -> None:
    with pytest.raises(P4Error, match="must be an assignable l-value"):
        plan("g(x, y, y, hdr, hdr)")
    dont_care = plan("g(x, _, y, _, hdr)")
    assert dont_care.outs[1] is None and dont_care.args[1].value == tir.Const(U8, 0)


class _Exit(Exception):
    def __init__(self, outs) -> None:
        self.outs = outs


class Obj:
    def __init__(self, v: int) -> None:
        self.v = v

    def _copy(self) -> Obj:
        return Obj(self.v)

    def _set(self, other: Obj) -> None:
        self.v = other.v


def test_generator_copies_out_after_the_call_and_when_the_callee_exits() -> None:
    u8 = T.Bits(8)
    p = tir.CallPlan("f", "", (tir.CallArg(name(u8, "x")), tir.CallArg(tir.Const(u8, 0))),
                     (name(u8, "x"), tir.Slice(T.Bits(4), name(u8, "y"), 3, 0)), "_t1", 0, may_exit=True)
    lines, result = exprgen.call(p)
    assert result == "_t1"
    env: dict = {"x": 1, "y": 0xa0, "_Exit": _Exit, "f": lambda a, b: (a + 1, 5)}
    exec("\n".join(lines), env)             # noqa: S102 - generated from our own plan
    assert (env["x"], env["y"]) == (2, 0xa5)

    def exits(a, b):
        raise _Exit((a + 10, 3))

    env.update(x=1, y=0, f=exits)
    with pytest.raises(_Exit):
        exec("\n".join(lines), env)         # noqa: S102
    assert (env["x"], env["y"]) == (11, 3)  # copied out, then the exit keeps unwinding


def test_generator_copies_objects_in_and_out_through_temps() -> None:
    h = T.HeaderT("h_t")
    p = tir.CallPlan("f", "ctx", (tir.CallArg(tir.Copy(h, name(h, "o")), temp="_t1", target=name(h, "o")),),
                     (), "", 0, may_exit=False)
    lines, result = exprgen.call(p)

    def f(ctx, tmp):
        tmp.v = 42
        glob["o"].v = 7                  # the callee writes the global too: the copy-out wins
        return None

    glob: dict = {"o": Obj(1), "f": f, "ctx": None}
    exec("\n".join(lines), glob)         # noqa: S102
    assert glob["o"].v == 42 and result == "_t_obj"


def test_generator_copies_out_of_a_call_inside_an_expression_when_python_evaluates_it() -> None:
    """`x + f(x)` reads the old x, `f(x) + x` the new one (P4's left-to-right order)."""
    u8 = T.Bits(8)
    p = tir.CallPlan("f", "", (tir.CallArg(name(u8, "x")),), (name(u8, "x"),), "_t1", 1, may_exit=False)
    defs, call = exprgen.call_in_expression(p, "_co1")
    assert defs[1] == "    nonlocal x"
    body = "\n".join("    " + ln for ln in defs)
    src = (f"def outer(f):\n    x = 1\n{body}\n    a = x + {call}\n    x = 1\n    b = {call} + x\n"
           f"    return a, b, x\n")
    env: dict = {}
    exec(src, env)                      # noqa: S102 - generated from our own plan
    assert env["outer"](lambda v: (10, v + 5)) == (11, 16, 6)


def test_value_returning_call_with_a_dont_care_out_argument_runs() -> None:
    """`f(_)` inside an expression: the callee's result tuple is unpacked by the helper (the value alone)."""
    from tests.p4exec.p4prog import run as run_program

    out = run_program("hdr.h.b = twice(_, hdr.h.a) + 8w1;", bytes([3, 0, 0, 0]),
                      decls="bit<8> twice(out bit<8> o, in bit<8> v) { o = v; return v + v; }")
    assert out == [(1, bytes([3, 7, 0, 0]))]


def test_assignments_are_ir_statements() -> None:
    c = _checker(VARS)
    lhs = c.exprs.expr(_expr_ast("x[3:0]"))
    rhs = c.exprs.expr(_expr_ast("4w5"))
    assert lhs.lv is not None
    st = c.statements.assignment(lhs, rhs)
    assert st == tir.Assign(lhs.lv.node, tir.Const(T.Bits(4), 5))
    env = {"v_x": 0xf0}
    exec("\n".join(exprgen.statement(st)), {}, env)     # noqa: S102 - generated from our own IR
    assert env["v_x"] == 0xf5
    whole = c.statements.assignment(c.exprs.expr(_expr_ast("hdr")), c.exprs.expr(_expr_ast("hdr")))
    assert isinstance(whole, tir.SetObject)
    assert exprgen.statement(whole) == ["v_hdr._set(v_hdr)"]


def test_is_valid_is_an_ir_node() -> None:
    e = check("hdr.isValid()")
    assert isinstance(e.node, tir.IsValid) and not e.node.union and e.type == T.BOOL
    assert e.code == "v_hdr._v"
    assert exprgen.code(tir.IsValid(T.BOOL, name(T.BOOL, "u"), union=True)) == "u._valid()"


# ------------------------------------------------------------------ statements: calls, locals, return, exit
def _function_body(c: Compiler, body: str, out_params: list[str]) -> list[A.Node]:
    """Statements of `body` checked in a function returning bit<8> whose scalar out parameters are `out_params`."""
    c.st.ctx = Ctx("function", ret_type=U8, out_params=list(out_params))
    prog = parse_source(f"{TYPES}\nbit<8> probe() {{ {body} }}\n", "<ir>")
    fn = prog.decls[-1]
    assert isinstance(fn, A.FunctionDecl)
    return list(fn.body.stmts)


def test_checker_turns_a_void_call_statement_into_its_call_plan() -> None:
    c = _checker(VARS)
    prog = parse_source(f"{TYPES}\n{CALLEE}\n", "<ir>")
    g = prog.decls[-1]
    c.st.declare("g", Sym("function", py="f_g", decl=g), None)
    call = _expr_ast("g(x, hdr.a, y, hdr, hdr)")
    assert isinstance(call, A.Call)
    e = c.calls.call(call, statement=True)
    assert isinstance(e.extra, tir.CallPlan) and e.extra.func == "f_g"
    assert e.extra.outs == (tir.Name(U8, "v_x"), e.extra.args[1].value)


def test_checker_returns_carry_the_out_parameters_and_locals_their_value() -> None:
    c = _checker(VARS)
    stmts = _function_body(c, "bit<8> t = y; return t + 8w1;", ["v_x"])
    assert c.statements.return_stmt(None) == tir.Return(None, ("v_x",))
    em = Emitter()
    for s in stmts:
        c.statements.stmt(s, em)
    assert em.lines == ["v_t = v_y", "return (((v_t + 1) & 0xff), v_x, )"]


def test_generator_writes_call_local_return_exit_and_pass_statements() -> None:
    u8 = T.Bits(8)
    p = tir.CallPlan("f", "", (tir.CallArg(name(u8, "x")),), (name(u8, "x"),), "_t1", 0, may_exit=False)
    lines = exprgen.statement(tir.CallStmt(p))
    env: dict = {"x": 4, "f": lambda a: (a * 2,)}
    exec("\n".join(lines), env)                  # noqa: S102 - generated from our own IR
    assert env["x"] == 8
    assert exprgen.statement(tir.Local("v_t", tir.Const(u8, 200))) == ["v_t = 0xc8"]
    assert exprgen.statement(tir.Return(None)) == ["return"]
    assert exprgen.statement(tir.Return(None, ("a", "b"))) == ["return (a, b, )"]
    assert exprgen.statement(tir.Return(name(u8, "v"))) == ["return v"]
    assert exprgen.statement(tir.Return(name(u8, "v"), ("a",))) == ["return (v, a, )"]
    assert exprgen.statement(tir.Exit()) == ["raise _EXIT"]
    assert exprgen.statement(tir.Pass()) == ["pass"]


def test_checker_builds_an_else_if_chain_as_one_if_node_with_nested_blocks() -> None:
    c = _checker(VARS)
    (s,) = _function_body(c, "if (y == 8w1) { x = 8w2; } else if (y == 8w3) { } else { { return y; } }", [])
    n = c.statements.node(s)
    assert isinstance(n, tir.If) and len(n.arms) == 2
    (c1, b1), (c2, b2) = n.arms
    assert isinstance(c1, tir.Compare) and b1 == (tir.Assign(tir.Name(U8, "v_x"), tir.Const(U8, 2)),)
    assert isinstance(c2, tir.Compare) and b2 == ()
    assert n.other is not None and isinstance(n.other[0], tir.Block)
    assert n.other[0].body == (tir.Return(tir.Name(U8, "v_y")),)


def test_checker_builds_a_for_loop_with_its_updates_break_and_continue() -> None:
    c = _checker(VARS)
    (s,) = _function_body(c, "for (bit<8> k = 8w0; k < 8w9; k = k + 8w1) { if (k == y) { break; } continue; }", [])
    n = c.statements.node(s)
    assert isinstance(n, tir.Block)
    init, loop = n.body
    assert init == tir.Local("v_k", tir.Const(U8, 0))
    assert isinstance(loop, tir.For) and isinstance(loop.cond, tir.Compare) and loop.first
    assert loop.updates == (tir.Assign(tir.Name(U8, "v_k"), tir.Arith(U8, "+", tir.Name(U8, "v_k"),
                                                                      tir.Const(U8, 1))),)
    brk, cont = loop.body
    assert isinstance(brk, tir.If) and brk.arms[0][1] == (tir.Break(),)
    assert cont == tir.Continue()
    (w,) = _function_body(c, "for ( ; x < 8w3; ) { x = x + 8w1; }", [])
    wn = c.statements.node(w)
    assert isinstance(wn, tir.For) and wn.updates == () and wn.first == ""


def test_checker_builds_for_in_loops_over_ranges_lists_and_stacks() -> None:
    c = _checker(VARS)
    r, lst, stk = _function_body(c, "for (bit<8> k in 8w1 .. y) { x = k; } for (bit<8> v in {y, 8w4}) { } "
                                    "for (h_t e in hs) { x = e.a; }", [])
    rn = c.statements.node(r)
    assert rn == tir.ForRange("v_k", tir.Const(U8, 1), tir.Name(U8, "v_y"),
                              (tir.Assign(tir.Name(U8, "v_x"), tir.Name(U8, "v_k")),))
    ln = c.statements.node(lst)
    assert ln == tir.ForList("v_v", (tir.Name(U8, "v_y"), tir.Const(U8, 4)), ())
    sn = c.statements.node(stk)
    assert isinstance(sn, tir.ForStack) and sn.var == "v_e" and sn.item and sn.stack.type == _type(c, "h_t[4]")


def test_checker_groups_switch_labels_and_keeps_the_default_last() -> None:
    c = _checker(VARS)
    (s,) = _function_body(c, "switch (y) { 8w1: 8w2: { x = 8w1; } default: { x = 8w0; } 8w3: { } 8w4: }", [])
    n = c.statements.node(s)
    assert isinstance(n, tir.Switch) and n.value == tir.Name(U8, "v_y") and n.tmp
    assert [arm.labels for arm in n.arms] == [(tir.Const(U8, 1), tir.Const(U8, 2)), (tir.Const(U8, 3),),
                                              (tir.Const(U8, 4),)]
    assert n.arms[0].body == (tir.Assign(tir.Name(U8, "v_x"), tir.Const(U8, 1)),)
    assert n.arms[1].body == () and n.arms[2].body == ()
    assert n.default == (tir.Assign(tir.Name(U8, "v_x"), tir.Const(U8, 0)),)


@pytest.mark.parametrize("body, message", [
    ("switch (y) { 8w1: { } 8w1: { } }", r"<ir>:\d+:\d+: .*duplicate switch label"),
    ("switch (y) { x: { } }", r"<ir>:\d+:\d+: .*switch label must be a compile-time constant"),
    ("switch (y) { default: { } default: { } }", r"<ir>:\d+:\d+: .*duplicate default label"),
    ("break;", r"<ir>:\d+:\d+: .*'break' outside a for loop"),
    ("for (bit<8> k in hdr) { }", r"<ir>:\d+:\d+: .*cannot iterate over a value of type h_t"),
])
def test_checker_rejects_bad_switches_and_loops_with_a_location(body: str, message: str) -> None:
    c = _checker(VARS)
    (s,) = _function_body(c, body, [])
    with pytest.raises(P4Error, match=message):
        c.statements.node(s)


def _run_lines(lines: list[str], **env):
    """Run generated statements as the body of a function (loops need no module scope) and return its locals."""
    src = "def _f(" + ", ".join(env) + "):\n" + "\n".join("    " + ln for ln in lines) + "\n    return locals()\n"
    ns: dict = {}
    exec(src, ns)                                # noqa: S102 - generated from our own IR
    return ns["_f"](**env)


def test_generator_writes_for_loops_whose_continue_runs_the_updates() -> None:
    k, total, lim = name(U8, "k"), name(U8, "total"), name(U8, "lim")
    odd = tir.Compare(T.BOOL, "==", tir.Bitwise(U8, "&", k, tir.Const(U8, 1)), tir.Const(U8, 1))
    body = (tir.If(((odd, (tir.Continue(),)),), None), tir.Assign(total, tir.Arith(U8, "+", total, k)))
    loop = tir.For(tir.Compare(T.BOOL, "<", k, lim), (tir.Assign(k, tir.Arith(U8, "+", k, tir.Const(U8, 1))),),
                   "_first", body)
    lines = exprgen.statement(tir.Block((tir.Local("k", tir.Const(U8, 0)), loop)))
    assert lines[:3] == ["k = 0", "_first = True", "while True:"]
    assert _run_lines(lines, total=0, lim=7)["total"] == 0 + 2 + 4 + 6
    brk = tir.If(((tir.Compare(T.BOOL, "==", k, tir.Const(U8, 3)), (tir.Break(),)),), None)
    forever = tir.For(None, (), "", (tir.Assign(k, tir.Arith(U8, "+", k, tir.Const(U8, 1))), brk))
    assert exprgen.statement(forever)[0] == "while True:"
    assert _run_lines(exprgen.statement(forever), k=0)["k"] == 3


def test_generator_writes_for_in_loops() -> None:
    v, acc = name(U8, "v"), name(U8, "acc")
    add = (tir.Assign(acc, tir.Arith(U8, "+", acc, v)),)
    rng = exprgen.statement(tir.ForRange("v", tir.Const(U8, 2), name(U8, "hi"), add))
    assert _run_lines(rng, acc=0, hi=4)["acc"] == 2 + 3 + 4          # both ends included
    lst = exprgen.statement(tir.ForList("v", (name(U8, "a"), tir.Const(U8, 5)), add))
    assert _run_lines(lst, acc=1, a=10)["acc"] == 16

    class Hdr:
        def __init__(self, a: int) -> None:
            self.a = a

        def _copy(self) -> Hdr:
            return Hdr(self.a)

    class Stack:
        h = [Hdr(1), Hdr(2)]

    h_t = T.HeaderT("h_t", {"a": U8})
    stack_t = T.StackT(h_t, 2)
    elem = tir.Field(U8, name(h_t, "e"), "a")
    body = (tir.Assign(acc, tir.Arith(U8, "+", acc, elem)), tir.Assign(elem, tir.Const(U8, 0)))
    out = _run_lines(exprgen.statement(tir.ForStack("e", "_it", name(stack_t, "stk"), body)), acc=0, stk=Stack)
    assert out["acc"] == 3 and [x.a for x in Stack.h] == [1, 2]       # the loop variable is a copy


def test_generator_writes_a_switch_as_one_evaluation_and_an_if_chain() -> None:
    r = name(U8, "r")
    sw = tir.Switch("_t", name(U8, "y"), (
        tir.SwitchArm((tir.Const(U8, 1), tir.Const(U8, 2)), (tir.Assign(r, tir.Const(U8, 10)),)),
        tir.SwitchArm((tir.Const(U8, 3),), ()),
    ), (tir.Assign(r, tir.Const(U8, 99)),))
    lines = exprgen.statement(sw)
    assert lines[0] == "_t = y" and lines[1] == "if _t == 1 or _t == 2:" and lines[-2] == "else:"
    for y, want in ((1, 10), (2, 10), (3, 0), (7, 99)):
        assert _run_lines(lines, y=y, r=0)["r"] == want
    only_default = exprgen.statement(tir.Switch("_t", name(U8, "y"), (), ()))
    assert only_default == ["_t = y", "if True:", "    pass"]
    run_t = T.ActionRunT(None)               # an action_run switch compares the action names
    by_action = tir.Switch("_t", name(run_t, "ran"), (tir.SwitchArm((tir.Const(run_t, "C.fwd"),),
                                                                      (tir.Assign(r, tir.Const(U8, 1)),)),), None)
    assert _run_lines(exprgen.statement(by_action), ran="C.fwd", r=0)["r"] == 1
    assert _run_lines(exprgen.statement(by_action), ran="C.drop", r=0)["r"] == 0


def test_generator_writes_if_chains_flat_and_empty_branches_as_pass() -> None:
    b = T.BOOL
    s = tir.If(((name(b, "p"), (tir.Local("r", tir.Const(U8, 1)),)), (name(b, "q"), ())),
               (tir.Block((tir.Local("r", tir.Const(U8, 3)),)),))
    lines = exprgen.statement(s)
    assert lines == ["if p:", "    r = 1", "elif q:", "    pass", "else:", "    r = 3"]
    for p, q, want in ((True, False, 1), (False, True, None), (False, False, 3)):
        env: dict = {"p": p, "q": q}
        exec("\n".join(lines), {}, env)          # noqa: S102 - generated from our own IR
        assert env.get("r") == want
    assert exprgen.statement(tir.If(((name(b, "p"), ()),), None)) == ["if p:", "    pass"]


# ------------------------------------------------------------------ method, extern and table calls
V1TYPES = """#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<4> b; bit<4> c; }
header_union u_t { h_t x; h_t y; }
struct s_t { h_t h; u_t u; }
"""


def _v1checker(kind: str) -> Compiler:
    """A checker over core.p4/v1model.p4 with, in a `kind` block (parser/control), packet_in `pkt`,
    packet_out `po`, a header `hdr`, union `un`, struct `st`, stack `hs`, counter `cnt`, register `reg` (of
    bit<8>), meter `mtr`, a bit<32> `idx`, a bit<8> `x`, standard_metadata `sm` and a table `t`."""
    c = Compiler(parse_source(V1TYPES, "<ir>"), "<ir>")
    with pytest.raises(P4Error, match="no 'main'"):
        c.run()
    c.st.ctx = Ctx(kind)
    c.st.push()

    def ext(name: str, *args: T.Type) -> T.ExternT:
        entry = c.st.types[name]
        return T.ExternT(name, entry[1], args)

    u32 = T.Bits(32)
    for name, t, py in (("pkt", ext("packet_in"), "data"), ("po", ext("packet_out"), "p_po"),
                        ("cnt", ext("counter"), "L.cnt"), ("reg", ext("register", U8), "L.reg"),
                        ("mtr", ext("meter"), "L.mtr")):
        c.st.declare(name, Sym("instance", t, py), None)
    variables: tuple[tuple[str, T.Type], ...] = (
        ("hdr", c.st.types["h_t"]), ("un", c.st.types["u_t"]), ("st", c.st.types["s_t"]),
        ("hs", T.StackT(c.st.types["h_t"], 2)), ("idx", u32), ("x", U8), ("sm", c.st.types["standard_metadata_t"]))
    for name, vt in variables:
        c.st.declare(name, Sym("param", vt, py=f"p_{name}", direction="inout"), None)
    fwd = SimpleNamespace(action=SimpleNamespace(local="fwd", name="C.fwd"))
    table = SimpleNamespace(pyfunc="TA_t", local="t", actions=[fwd], applied=False)
    c.st.declare("t", Sym("table", T.TableT(table), "TA_t", info=table), None)
    return c


def _v1stmt(c: Compiler, text: str) -> tir.Stmt:
    prog = parse_source(f"{V1TYPES}\nvoid probe() {{ {text} }}\n", "<ir>")
    fn = prog.decls[-1]
    assert isinstance(fn, A.FunctionDecl)
    (s,) = fn.body.stmts
    return c.statements.node(s)


def test_checker_turns_header_and_stack_methods_into_statements() -> None:
    c = _v1checker("control")
    h_t = c.st.types["h_t"]
    sv = _v1stmt(c, "un.x.setValid();")
    assert isinstance(sv, tir.SetValidity) and sv.valid
    assert sv.invalidate == (tir.Field(h_t, tir.Name(c.st.types["u_t"], "p_un"), "y"),)
    assert exprgen.statement(sv) == ["p_un.y._v = False", "p_un.x._v = True"]
    assert _v1stmt(c, "hdr.setInvalid();") == tir.SetValidity(tir.Name(h_t, "p_hdr"), False)
    shift = _v1stmt(c, "hs.push_front(1);")
    assert isinstance(shift, tir.StackShift) and (shift.op, shift.count) == ("push_front", 1)


def test_checker_turns_extern_methods_into_typed_calls() -> None:
    c = _v1checker("control")
    count = _v1stmt(c, "cnt.count(idx);")
    assert isinstance(count, tir.Eval) and isinstance(count.value, tir.ExternCall)
    assert (count.value.extern, count.value.method) == ("counter", "count")
    assert count.value.args == (tir.Name(T.Bits(32), "p_idx"),)
    read = _v1stmt(c, "reg.read(x, idx);")
    assert isinstance(read, tir.Assign) and read.target == tir.Name(U8, "p_x")
    assert isinstance(read.value, tir.ExternCall) and read.value.method == "read" and read.value.type == U8
    assert exprgen.statement(read) == ["p_x = L.reg.dp_read(p_idx)"]
    write = _v1stmt(c, "reg.write(idx, x);")
    assert exprgen.statement(write) == ["L.reg.dp_write(p_idx, p_x)"]
    with pytest.raises(P4Error, match=r"<ir>:\d+:\d+: .*index of type bit<8> where bit<32> is expected"):
        _v1stmt(c, "cnt.count(x);")


def test_checker_turns_table_apply_and_extern_functions_into_nodes() -> None:
    c = _v1checker("control")
    apply = _v1stmt(c, "t.apply();")
    assert isinstance(apply, tir.Eval) and apply.value == tir.TableApply(apply.value.type, "TA_t", "")
    hit = c.exprs.expr(_v1expr("t.apply().hit"))
    assert isinstance(hit.node, tir.ApplyResult) and isinstance(hit.node.base, tir.TableApply)
    drop = _v1stmt(c, "mark_to_drop(sm);")
    assert isinstance(drop, tir.MarkToDrop)
    h = _v1stmt(c, "hash(x, HashAlgorithm.crc16, 8w0, {hdr.a, hdr.b}, 8w16);")
    assert isinstance(h, tir.Assign) and isinstance(h.value, tir.Hash) and h.value.max_const == 16
    assert isinstance(h.value.value, tir.HashBytes) and isinstance(h.value.value.data, tir.Packed)
    assert [w for _, w in h.value.value.data.fields] == [8, 4]


def _v1expr(text: str) -> A.Expr:
    prog = parse_source(f"{V1TYPES}\nbool probe() {{ return {text}; }}\n", "<ir>")
    fn = prog.decls[-1]
    assert isinstance(fn, A.FunctionDecl)
    ret = fn.body.stmts[0]
    assert isinstance(ret, A.Return) and ret.value is not None
    return ret.value


def test_checker_turns_extract_and_emit_into_statements() -> None:
    c = _v1checker("parser")
    ex = _v1stmt(c, "pkt.extract(un.y);")
    assert isinstance(ex, tir.Extract) and ex.stack is None and len(ex.invalidate) == 1
    nxt = _v1stmt(c, "pkt.extract(hs.next);")
    assert isinstance(nxt, tir.Extract) and nxt.stack == tir.Name(T.StackT(c.st.types["h_t"], 2), "p_hs")
    with pytest.raises(P4Error, match=r"<ir>:\d+:\d+: .*extract needs a header, not bit<8>"):
        _v1stmt(c, "pkt.extract(x);")
    c.st.ctx = Ctx("control")
    em = _v1stmt(c, "po.emit(st);")
    assert isinstance(em, tir.Block) and [type(x) for x in em.body] == [tir.Emit, tir.Emit, tir.Emit]


def test_generator_extracts_and_emits_headers_through_their_layout() -> None:
    h_t = T.HeaderT("h_t", {"a": U8, "b": T.Bits(4), "c": T.Bits(4)})

    class Hdr:
        _v = False
        a = b = c = 0

    lines = exprgen.statement(tir.Extract(name(h_t, "hdr")))
    env = _run_lines(lines + ["return_ = (off, hdr.a, hdr.b, hdr.c, hdr._v)"], data=b"\x12\x34\x56", off=1,
                     n=3, hdr=Hdr())
    assert env["return_"] == (3, 0x34, 0x5, 0x6, True)

    class ParserErr(Exception):
        pass

    ns: dict = {"_ParserErr": ParserErr}
    exec("def _f(data, off, n, hdr):\n" + "".join("    " + ln + "\n" for ln in lines), ns)  # noqa: S102
    with pytest.raises(ParserErr):                     # PacketTooShort: one byte left for a 2-byte header
        ns["_f"](b"\x12", 0, 1, Hdr())
    out: list[bytes] = []
    h = Hdr()
    h._v, h.a, h.b, h.c = True, 0xab, 0xc, 0xd
    _run_lines(exprgen.statement(tir.Emit(name(h_t, "h"), name(T.VOID, "out"))), h=h, out=out)
    assert out == [bytes([0xab, 0xcd])]


def test_generator_writes_extern_method_and_function_nodes() -> None:
    u32 = T.Bits(32)
    count = tir.Eval(tir.ExternCall(T.VOID, "counter", "count", name(T.VOID, "c"), (name(u32, "i"),)))
    assert exprgen.statement(count) == ["c.count(i, PK.pkt_len)"]
    assert exprgen.statement(tir.Clone(True, tir.Const(u32, 5), "_FL0")) == ["PK.clone = (1, 5, _FL0)"]
    assert exprgen.statement(tir.Clone(False, tir.Const(u32, 5))) == ["PK.clone = (0, 5, None)"]
    assert exprgen.statement(tir.Requeue(True, "_NOFL")) == ["PK.recirc = _NOFL"]
    packed = tir.Packed(T.VOID, ((name(U8, "a"), 8), (name(T.Bits(4), "b"), 4)))
    env = _run_lines(["r = " + exprgen.code(packed)], a=0x12, b=0x3)
    assert env["r"] == bytes([0x12, 0x30])                       # zero padding to a whole byte
    h = tir.Hash(U8, tir.HashBytes(u32, "hb", packed), tir.Const(U8, 1), tir.Const(U8, 10), 10)
    assert _run_lines(["r = " + exprgen.code(h)], a=0x12, b=0x3, hb=lambda b: 123)["r"] == 1 + 123 % 10
    ck = tir.VerifyChecksum(tir.Const(T.BOOL, True), tir.Truncated(T.Bits(16), name(u32, "v")), name(T.Bits(16), "f"))
    assert exprgen.statement(ck) == ["if True and (v & 0xffff) != f: PK.sm.checksum_error = 1"]


def test_generator_copies_exit_outs_of_a_body_onto_the_exit() -> None:
    class Exit(Exception):
        outs: tuple = ()

    lines = exprgen.statement(tir.OutsOnExit(("a_x",), (tir.Assign(name(U8, "a_x"), tir.Const(U8, 7)),
                                                         tir.Exit())))
    src = "def _f(a_x):\n" + "".join("    " + ln + "\n" for ln in lines)
    ns: dict = {"_Exit": Exit, "_EXIT": Exit()}
    exec(src, ns)                                # noqa: S102 - generated from our own IR
    with pytest.raises(Exit) as caught:
        ns["_f"](1)
    assert caught.value.outs == (7,)


def test_python_names_lists_what_an_ir_body_reaches() -> None:
    h_t = T.HeaderT("h_t", {"a": U8})
    plan = tir.CallPlan("A_f", "p_hdr, L", (tir.CallArg(name(U8, "a_x")),), (), "", 0, may_exit=True)
    body = (tir.Assign(tir.Field(U8, name(h_t, "a_h"), "a"), tir.Const(U8, 1)), tir.CallStmt(plan))
    names = set(tir.python_names(body))
    assert {"a_h", "A_f", "p_hdr, L", "a_x", "a"} <= names
    assert not any(isinstance(x, T.Type) for x in names)      # types are not walked


def test_checker_builds_an_action_run_switch_over_the_tables_action_names() -> None:
    c = _v1checker("control")
    sw = _v1stmt(c, "switch (t.apply().action_run) { fwd: { x = 8w1; } default: { } }")
    assert isinstance(sw, tir.Switch) and isinstance(sw.value, tir.ApplyResult)
    assert sw.value.member == "action_run" and isinstance(sw.value.base, tir.TableApply)
    (arm,) = sw.arms
    assert [x.value for x in arm.labels if isinstance(x, tir.Const)] == ["C.fwd"]     # the action's full name
    assert sw.default == ()
    with pytest.raises(P4Error, match=r"<ir>:\d+:\d+: .*'drop' is not an action of table t"):
        _v1stmt(c, "switch (t.apply().action_run) { drop: { } }")
