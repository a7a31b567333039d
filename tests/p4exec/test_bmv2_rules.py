"""p4c-bm2-ss's back-end rules as p4exec applies them: each verdict below was measured with p4c-bm2-ss v1.2.4.17
(the same program compiled by both; tests/p4exec/test_p4c_reference.py repeats that for the corpus where p4c is
on PATH). These run without p4c."""
from __future__ import annotations

import pytest

from p4exec.compiler.program import compile_source
from p4exec.errors import P4Error
from tests.p4exec.p4prog import harness, program

TABLES = """
    action a1() { hdr.h.c = 1; }
    action a2() { hdr.h.c = 2; }
    table t { key = { hdr.h.a : exact; } actions = { a1; a2; NoAction; } }
    table u { key = { hdr.h.b : exact; } actions = { a1; a2; NoAction; } }
    Inner() inner;
"""
INNER = """
control Inner(inout headers_t hdr) {
    table it { key = { hdr.h.d : exact; } actions = { NoAction; } }
    apply { it.apply(); }
}
"""

# apply block of MyIngress -> None (accepted) or the p4c-bm2-ss message p4exec must give
APPLIES = [
    ("if (hdr.h.c == 1) { t.apply(); } else { t.apply(); }", None),
    ("if (hdr.h.c == 1) { t.apply(); } else { t.apply(); } u.apply(); hdr.h.b = 3;", None),
    ("if (hdr.h.c == 1) { t.apply(); return; } t.apply();", None),
    ("if (hdr.h.c == 1) { hdr.h.b = 1; t.apply(); } else { t.apply(); }", None),
    ("switch (u.apply().action_run) { a1: { t.apply(); } a2: { t.apply(); } }", None),
    ("switch (u.apply().action_run) { a1: a2: { t.apply(); } default: { t.apply(); } }", None),
    ("if (hdr.h.c == 1) { if (t.apply().hit) { u.apply(); } } else { if (!t.apply().hit) { u.apply(); } }", None),
    ("if (hdr.h.c == 1) { inner.apply(hdr); } else { inner.apply(hdr); }", None),
    ("if (hdr.h.c == 1) { t.apply(); } else if (hdr.h.c == 2) { t.apply(); } else { u.apply(); }", None),
    ("t.apply(); t.apply();", "path from table MyIngress.t back to itself"),
    ("if (hdr.h.c == 1) { t.apply(); } t.apply();", "path from table MyIngress.t back to itself"),
    ("inner.apply(hdr); inner.apply(hdr);", "path from table MyIngress.inner.it back to itself"),
    ("if (hdr.h.c == 1) { t.apply(); hdr.h.b = 1; } else { t.apply(); }", "table MyIngress.t has multiple successors"),
    ("if (hdr.h.c == 1) { t.apply(); a1(); } else { t.apply(); a1(); }", "table MyIngress.t has multiple successors"),
    ("if (hdr.h.c == 1) { t.apply(); exit; } else { t.apply(); }", "table MyIngress.t has multiple successors"),
    ("if (hdr.h.c == 1) { if (t.apply().hit) { hdr.h.b = 1; } } else { t.apply(); }",
     "table MyIngress.t has multiple successors"),
]


@pytest.mark.parametrize(("apply", "message"), APPLIES)
def test_table_applied_at_several_places(apply: str, message: str | None) -> None:
    text = program(decls="", ingress_decls=TABLES, ingress=apply).replace("parser MyParser", INNER + "parser MyParser")
    if message is None:
        compile_source(text, "cfg.p4")
        return
    with pytest.raises(P4Error, match=message):
        compile_source(text, "cfg.p4")


ACTION_DECLS = """
    register<bit<8>>(4) r;
    action other() { mark_to_drop(sm); }
    action plain() { hdr.h.c = 5; }
    action act(bit<8> x) { BODY }
    table t { key = { hdr.h.a : exact; } actions = { act; NoAction; } }
"""

# body of an action -> None (accepted) or the construct p4c-bm2-ss names in its error
ACTION_BODIES = [
    ("hdr.h.b = x; exit;", None),
    ("if (x == 1) { return; } hdr.h.b = x;", None),
    ("if (x == 1) { hdr.h.b = x; } else { hdr.h.c = 2; }", None),
    ("if (x == 1) { plain(); }", None),
    ("if (true) { mark_to_drop(sm); }", None),
    ("if (hdr.h.isValid()) { hdr.h.b = 1; }", None),
    ("{ if (x == 2) { hdr.h.b = 1; } } mark_to_drop(sm);", None),
    ("if (x == 1) { exit; } hdr.h.b = x;", "exit"),
    ("if (x == 1) { hdr.h.b = 1; } else { exit; }", "exit"),
    ("if (x == 1) { mark_to_drop(sm); }", "mark_to_drop(sm)"),
    ("if (x == 1) { r.write(0, x); }", "r.write(0, x)"),
    ("if (x == 1) { hdr.h.setInvalid(); }", "hdr.h.setInvalid()"),
    ("if (x == 1) { other(); }", "mark_to_drop(sm)"),
    ("if (x == 1) { return; } mark_to_drop(sm);", "mark_to_drop(sm)"),
    ("if (x == 1) { hdr.h.b = 1; } else { return; } r.write(0, x);", "r.write(0, x)"),
]


@pytest.mark.parametrize(("body", "construct"), ACTION_BODIES)
def test_conditional_calls_in_actions(body: str, construct: str | None) -> None:
    text = program(ingress_decls=ACTION_DECLS.replace("BODY", body), ingress="t.apply();")
    if construct is None:
        compile_source(text, "act.p4")
        return
    with pytest.raises(P4Error) as e:
        compile_source(text, "act.p4")
    assert f"{construct}: Conditional execution in actions unsupported on this target" in str(e.value)


@pytest.mark.parametrize(("version", "index"), [(20190101, "32w1"), (20200408, "8w1"), (20180101, "32w1")])
def test_any_known_v1model_version(version: int, index: str) -> None:
    """v1model.p4 compares V1MODEL_VERSION with 20200408: older numbers get bit<32> indices, from 20200408 the
    index type argument; p4c (since p4lang/p4c#5296) accepts the numbers 20180101..20200408 (negative program
    v1model_version_unknown shows the refusal)."""
    decl = "counter(4, CounterType.packets) c;" if index == "32w1" else "counter<bit<8>>(4, CounterType.packets) c;"
    text = f"#define V1MODEL_VERSION {version}\n" + program(ingress_decls=decl, ingress=f"c.count({index});")
    compile_source(text, "version.p4")


def test_actions_sharing_a_control_plane_name_are_refused() -> None:
    """Two action declarations with one @name: p4c-bm2-ss 1.2.4.17 merged the names, p4c's newer frontend
    (DuplicateActionControlPlaneNameCheck) refuses them at the second declaration, and so does p4exec."""
    with pytest.raises(P4Error, match="conflicting control plane name"):
        harness(ingress_decls='@name("set") action set_a() { hdr.h.a = 1; } '
                              '@name("set") action set_b() { hdr.h.b = 1; }',
                ingress="set_a(); set_b();")
