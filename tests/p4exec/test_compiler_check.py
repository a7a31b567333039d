"""Semantic checks: names, types and widths as P4_16 defines them; every error located, never a traceback."""
from __future__ import annotations

import random

import pytest

from p4exec.compiler.program import compile_source
from p4exec.errors import P4Error
from tests.p4exec.p4prog import program

# (program pieces, the text on the offending line, message substring)
CASES = [
    (dict(ingress="bit<16> x = hdr.h.a;"), "bit<16> x = hdr.h.a;", "cannot convert bit<8> to bit<16>"),
    (dict(ingress="hdr.h.a = hdr.h.a + meta.w;"), "hdr.h.a = hdr.h.a + meta.w;", "different types bit<8> and bit<16>"),
    (dict(ingress="hdr.h.a = nosuch;"), "hdr.h.a = nosuch;", "unknown name 'nosuch'"),
    (dict(ingress="hdr.h.zz = 1;"), "hdr.h.zz = 1;", "has no field 'zz'"),
    (dict(ingress="bool b = hdr.h.a;"), "bool b = hdr.h.a;", "does not match expected type bool"),
    (dict(ingress="hdr.h.a = hdr.h.a[9:2];"), "hdr.h.a = hdr.h.a[9:2];", "slice [9:2] out of range"),
    (dict(ingress="hdr.h.a = hdr.h.a << hdr.h.b ++ 1;"), "hdr.h.a = hdr.h.a << hdr.h.b ++ 1;", "'++'"),
    (dict(ingress_decls="action a(bit<8> v) { hdr.h.a = v; }", ingress="a();"), "a();", "expected 1 argument"),
    (dict(ingress_decls="action a() { } action a() { }"), "action a() { } action a() { }", "duplicate declaration of 'a'"),
    (dict(ingress_decls="action a() { } action b() { } table t { key = { hdr.h.a: exact; } actions = { a; } "
                        "default_action = b(); }"), "table t", "not in the actions list"),
    (dict(ingress_decls="table t { key = { hdr.h.a: fuzzy; } actions = { NoAction; } }"), "table t",
     "unknown match kind 'fuzzy'"),
    (dict(ingress="const bit<8> K = 1; K = 2;"), "K = 2;", "cannot assign to 'K'"),
    (dict(ingress="mark_to_drop(sm, sm);"), "mark_to_drop(sm, sm);", "mark_to_drop: expected"),
    (dict(ingress="hash(meta.m, HashAlgorithm.crc16, 8w0, { hdr.h.a });"), "hash(", "expected 5 argument"),
    (dict(ingress="hdr.h.a = (bit<8>)true;"), "hdr.h.a = (bit<8>)true;", "cannot cast bool to bit<8>"),
    (dict(ingress="if (hdr.h.a) { }"), "if (hdr.h.a)", "does not match expected type bool"),
    (dict(ingress="exit; int<8> s = hdr.h.a;"), "int<8> s = hdr.h.a;", "cannot convert bit<8> to int<8>"),
    (dict(decls="header bad_t { bit<7> x; }"), "header bad_t", "multiple of 8 bits"),
    (dict(decls="header bad_t { varbit<32> x; varbit<8> y; }"), "varbit<8> y;", "unsupported: more than one varbit"),
    (dict(ingress="hdr.h.a = 8w1 / 0;"), "hdr.h.a = 8w1 / 0;", "division by zero"),
    (dict(ingress="hdr.h.setValid(1);"), "hdr.h.setValid(1);", "takes no arguments"),
    (dict(ingress="hdr.h.a = error.NoSuch;"), "error.NoSuch", "unknown error 'error.NoSuch'"),
    (dict(parser="transition select(hdr.h.a) { 1: nowhere; default: accept; } } state other {"), "1: nowhere;",
     "unknown parser state 'nowhere'"),
    (dict(ingress="random(meta.m, 1, 2, 3);"), "random(meta.m, 1, 2, 3);", "random: expected 3"),
    (dict(ingress_decls="counter(8, CounterType.packets) c;", ingress="c.count(1, 2);"), "c.count(1, 2);",
     "expected 1 argument"),
    (dict(ingress_decls="register<bit<8>>(4) r;", ingress="r.write(0, meta.w);"), "r.write(0, meta.w);",
     "cannot convert bit<16> to bit<8>"),
    (dict(ingress="switch (hdr.h.a) { 1: { } 1: { } }"), "switch (hdr.h.a)", "duplicate switch label"),
    (dict(egress="pkt.emit(hdr.h);"), "pkt.emit(hdr.h);", "unknown name 'pkt'"),
]


def line_of(src: str, text: str) -> int:
    for i, line in enumerate(src.split("\n"), 1):
        if text in line:
            return i
    raise AssertionError(f"{text!r} not in program")


@pytest.mark.parametrize("pieces, text, msg", CASES, ids=[c[2][:40] for c in CASES])
def test_bad_program_gives_located_error(pieces, text, msg) -> None:
    src = program(**pieces)
    with pytest.raises(P4Error) as ei:
        compile_source(src, "bad.p4")
    err = ei.value
    assert msg in str(err), str(err)
    assert err.loc.file == "bad.p4"
    assert err.loc.line == line_of(src, text), str(err)
    assert err.loc.col >= 1
    assert str(err).startswith(f"bad.p4:{err.loc.line}:{err.loc.col}: error: ")


def test_good_program_compiles() -> None:
    compile_source(program(ingress="hdr.h.a = hdr.h.b + 1; meta.w = ((bit<16>)hdr.h.a ++ 8w0)[23:8];"), "ok.p4")


def test_int_literals_take_the_other_operands_width() -> None:
    compile_source(program(ingress="hdr.h.a = 255 + hdr.h.b; bit<16> x = 16w1 << 3; meta.w = x |+| 70000;"),
                   "ok.p4")


def test_mutated_programs_never_raise_anything_but_p4error() -> None:
    """Delete or duplicate random spans of a valid program: the compiler answers with P4Error only."""
    base = program(ingress_decls="action a(bit<8> v) { hdr.h.a = v; } table t { key = { hdr.h.a: lpm; } "
                                 "actions = { a; NoAction; } default_action = NoAction(); }",
                   ingress="if (hdr.h.isValid()) { t.apply(); } else { hdr.h.b = hdr.h.c |+| 3; }")
    rng = random.Random(7)
    body_start = base.index("header h_t")
    for _ in range(60):
        i = rng.randrange(body_start, len(base) - 1)
        j = min(len(base), i + rng.randrange(1, 12))
        mutated = base[:i] + (base[i:j] * rng.randrange(0, 3)) + base[j:]
        try:
            compile_source(mutated, "mut.p4")
        except P4Error as e:
            assert e.loc is not None


def test_selector_table_default_action_is_a_bmv2_warning() -> None:
    """p4c-bm2-ss drops the default_action of a table with an action selector (a warning): p4exec records it."""
    decls = ("action_selector(HashAlgorithm.crc16, 32w16, 32w10) sel; action s(bit<9> p) { sm.egress_spec = p; } "
             "table t { key = { hdr.h.a: exact; hdr.h.b: selector; } actions = { s; NoAction; } "
             "implementation = sel; default_action = %s; }")
    warned = compile_source(program(ingress_decls=decls % "s(9w3)", ingress="t.apply();"), "sel.p4")
    assert len(warned.info.warnings) == 1
    assert "sel.p4:" in warned.info.warnings[0] and "p4c-bm2-ss ignores it" in warned.info.warnings[0]
    quiet = compile_source(program(ingress_decls=decls % "NoAction()", ingress="t.apply();"), "sel.p4")
    assert quiet.info.warnings == []


def test_p4exec_compile_prints_warnings(tmp_path, capsys) -> None:
    """`p4exec compile` shows what it recorded (on stderr, as p4c prints warnings) and still succeeds."""
    from p4exec.cli import main

    decls = ("action_selector(HashAlgorithm.crc16, 32w16, 32w10) sel; action s(bit<9> p) { sm.egress_spec = p; } "
             "table t { key = { hdr.h.a: exact; hdr.h.b: selector; } actions = { s; NoAction; } "
             "implementation = sel; default_action = s(9w3); }")
    src = tmp_path / "sel.p4"
    src.write_text(program(ingress_decls=decls, ingress="t.apply();"))
    assert main(["compile", str(src), "-o", str(tmp_path / "sel.json")]) == 0
    err = capsys.readouterr().err
    assert "sel.p4:" in err and "warning:" in err and "p4c-bm2-ss ignores it" in err
