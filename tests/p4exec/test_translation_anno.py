"""`@p4runtime_translation` bodies read as p4c-bm2-ss 1.2.4.17 reads them (each verdict, reason and column below
was measured with it on a one-line annotation at column 1), and only where live code uses the type."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from p4exec.compiler.program import compile_source
from p4exec.errors import P4Error, SourceLoc
from p4exec.frontend import ast as A
from p4exec.frontend.translation_anno import Translation, parse_translation
from tests.p4exec.p4prog import program


def _anno(body: str) -> A.Annotation:
    return A.Annotation("p4runtime_translation", body, [], loc=SourceLoc("t.p4", 4, 1))


@pytest.mark.parametrize(("body", "value"), [
    ('"p4.org/x", 32', Translation("p4.org/x", 32)),
    ('"p4.org/x", string', Translation("p4.org/x", None)),
    ('"p4.org/x", 8w32', Translation("p4.org/x", 32)),
    ('"p4.org/x", bit<12>', Translation("p4.org/x", 12)),
    ('"p4.org/x", 0', Translation("p4.org/x", 0)),
    ('"", 32', Translation("", 32)),
])
def test_accepted_bodies(body: str, value: Translation) -> None:
    assert parse_translation(_anno(body)) == value


@pytest.mark.parametrize(("body", "col", "reason"), [
    ('32, "p4.org/x"', 24, "unexpected INTEGER, expecting STRING_LITERAL"),
    ('"p4.org/x"', 1, 'unexpected END_ANNOTATION, expecting ","'),
    ('"p4.org/x", 32, 1', 38, 'unexpected ",", expecting END_ANNOTATION'),
    ('"p4.org/x", foo', 36, "unexpected IDENTIFIER, expecting BIT or STRING or INTEGER"),
    ('"p4.org/x", -3', 36, "unexpected -, expecting BIT or STRING or INTEGER"),
    ("", 1, "unexpected END_ANNOTATION, expecting STRING_LITERAL"),
])
def test_malformed_bodies_get_p4cs_reason_at_its_column(body: str, col: int, reason: str) -> None:
    with pytest.raises(P4Error) as e:
        parse_translation(_anno(body))
    assert e.value.loc == SourceLoc("t.p4", 4, col)
    assert f"malformed @p4runtime_translation: syntax error, {reason}" in str(e.value)


_BAD = '@p4runtime_translation(1, 2)\n'


@pytest.mark.parametrize(("decls", "meta", "ingress_decls", "apply", "rejected"), [
    # a typedef is transparent in P4Info, yet p4c parses its annotation where live code uses it
    (_BAD + "typedef bit<9> port_t;", "port_t p;", "", "", True),
    (_BAD + "typedef bit<9> port_t;", "", "", "", False),     # declared, never used
    # a use inside an action no table lists and nobody calls: p4c's mid-end drops the action first
    (_BAD + "type bit<9> port_t;", "", "action unused(port_t x) { sm.egress_spec = (bit<9>)x; }", "", False),
    (_BAD + "type bit<9> port_t;", "", "action used() { port_t x = 1; sm.egress_spec = (bit<9>)x; }",
     "used();", True),
])
def test_checked_only_where_live_code_uses_the_type(decls: str, meta: str, ingress_decls: str, apply: str,
                                                    rejected: bool) -> None:
    src = program(decls=decls, meta_fields=meta, ingress_decls=ingress_decls, ingress=apply)
    if rejected:
        with pytest.raises(P4Error, match="malformed @p4runtime_translation"):
            compile_source(src, "t.p4")
    else:
        compile_source(src, "t.p4")


_PIECES = st.sampled_from([*'"\\, <>-_0123456789abxws()\n', '"u"', '"\\x"', "8w", "0x", "string", "bit", "é"])


@settings(max_examples=1000, deadline=None)
@given(st.lists(_PIECES, max_size=12).map("".join))
def test_any_body_gives_a_value_or_a_located_error(body: str) -> None:
    """No body crashes the reader: it is a Translation or a P4Error (as p4c: a syntax error, never a crash)."""
    try:
        assert isinstance(parse_translation(_anno(body)), Translation)
    except P4Error as e:
        assert e.loc.file == "t.p4" and "@p4runtime_translation" in str(e)
