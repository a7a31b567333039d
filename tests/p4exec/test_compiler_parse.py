"""p4exec's LALR parser: the ambiguous corners of P4 (types vs names, '<' and '>>') and syntax errors."""
from __future__ import annotations

import pytest

from p4exec.errors import P4Error, P4SyntaxError
from p4exec.frontend import ast as A
from p4exec.frontend.parser import parse_int_literal, parse_source
from p4exec.harness import Harness
from tests.p4exec.p4prog import HEAD, program


def decls(src: str) -> dict[str, A.Decl]:
    prog = parse_source(HEAD + src, "t.p4")
    return {d.name: d for d in prog.decls}


def test_types_known_by_name_make_casts_and_type_args_parse() -> None:
    d = decls("""
typedef bit<8> byte_t;
header h_t { byte_t a; }
control C(inout h_t h) {
    register<bit<32>>(16) r;
    apply {
        h.a = (byte_t)((bit<16>)h.a >> 1);
        h.a = (bit<8>)(h.a < 3 ? 8w1 : 8w2);
    }
}
""")
    c = d["C"]
    assert isinstance(c, A.ControlDecl)
    inst = c.locals[0]
    assert isinstance(inst, A.Instantiation) and inst.type.name == "register"
    assert isinstance(inst.type.args[0], A.BitType)
    stmt = c.body.stmts[0]
    assert isinstance(stmt.rhs, A.Cast) and isinstance(stmt.rhs.expr, A.Binary) and stmt.rhs.expr.op == ">>"
    assert isinstance(c.body.stmts[1].rhs.expr, A.Cond)


def test_generic_method_call_with_type_args() -> None:
    d = decls("""
header h_t { bit<8> a; }
struct hs { h_t h; }
parser P(packet_in p, out hs h) {
    state start {
        transition select(p.lookahead<bit<8>>()) { 8w1 &&& 8w1: one; 2 .. 5: accept; default: reject; }
    }
    state one { p.extract(h.h); transition accept; }
}
""")
    sel = d["P"].states[0].transition
    assert isinstance(sel, A.Select)
    call = sel.exprs[0]
    assert isinstance(call, A.Call) and isinstance(call.type_args[0], A.BitType)
    kinds = [type(c.keyset).__name__ for c in sel.cases]
    assert kinds == ["KsMask", "KsRange", "KsDefault"]


def test_integer_literals() -> None:
    assert parse_int_literal("8w255", None).value == 255
    lit = parse_int_literal("16w0x0800", None)
    assert (lit.value, lit.width, lit.signed) == (0x800, 16, False)
    assert parse_int_literal("4s3", None).signed
    assert parse_int_literal("0b1010_1010", None).value == 0xAA
    assert parse_int_literal("0d99", None).value == 99
    assert parse_int_literal("0o17", None).value == 15


def test_annotations_parsed() -> None:
    d = decls("""
control C() {
    @name(".global_t") @hidden table t { actions = { NoAction; } }
    apply { t.apply(); }
}
""")
    t = d["C"].locals[0]
    assert [a.name for a in t.annos] == ["name", "hidden"]
    assert t.annos[0].args == [".global_t"]


@pytest.mark.parametrize("body, line_off, col, needle", [
    ("hdr.h.b = 1\n        hdr.h.a = 2;", 1, 9, "expected"),
    ("hdr.h.a = 8w1 +;", 0, 24, "unexpected ';'"),
    ("if (hdr.h.a == 1 { }", 0, 26, "unexpected '{'"),
])
def test_syntax_errors_are_located(body: str, line_off: int, col: int, needle: str) -> None:
    src = program(ingress=body)
    line = src.split("\n").index(next(x for x in src.split("\n") if body.split("\n")[0] in x)) + 1 + line_off
    with pytest.raises(P4SyntaxError) as ei:
        Harness.from_source(src, filename="syn.p4")
    err = ei.value
    assert err.loc.file == "syn.p4" and err.loc.line == line and err.loc.col == col, str(err)
    assert needle in str(err)


def test_unknown_type_is_named() -> None:
    with pytest.raises(P4Error) as ei:
        parse_source(HEAD + "header h_t { nosuch_t a; }\n", "u.p4")
    assert "unknown type 'nosuch_t'" in str(ei.value)


def test_entry_with_const_and_priority() -> None:
    """P4_16's `entry: optCONST entryPriority keyset ':' action`: `const priority = 10: ...` inside `entries`
    (p4c accepts it); the entry keeps its priority and the run uses it."""
    h = Harness.from_source(program(
        ingress_decls="action s(bit<8> v) { hdr.h.b = v; } table t { key = { hdr.h.a: ternary; } "
                      "actions = { s; NoAction; } entries = { const priority = 10: 8w1 &&& 8w0x0F : s(8w1); "
                      "priority = 20: 8w0x11 &&& 8w0xFF : s(8w2); } }",
        ingress="t.apply();"), filename="entries.p4", seed=1)
    assert h.send(0, bytes([0x11, 0, 0, 0])) == [(1, bytes([0x11, 2, 0, 0]))]
    assert h.send(0, bytes([0x01, 0, 0, 0])) == [(1, bytes([0x01, 1, 0, 0]))]


def test_generic_method_named_like_a_type() -> None:
    """`update` names a control type and a generic method of an extern: after a return type (or a '.') the
    name is the method and `<T>` its type parameters, as p4c parses it."""
    prog = parse_source(HEAD + """
control update(inout bit<8> x);
extern Summer {
    Summer();
    bit<16> update<T>(in T data);
    void clear();
}
""", "names.p4")
    ext = next(d for d in prog.decls if getattr(d, "name", "") == "Summer")
    assert ext is not None
