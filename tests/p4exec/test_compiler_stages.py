"""The compiler's stages on their own: checking fills ir.ProgramInfo, P4Info is built from that IR alone, the
Python classes of P4 data types come from checked types alone, the back-end rules run on the AST alone, and every
stage is deterministic (a refactoring that keeps the output byte-identical can be checked with
tests/p4exec/codegen_snapshot.py)."""
from __future__ import annotations

from pathlib import Path

import pytest

from p4exec.compiler import types as T
from p4exec.compiler.checks import BackendRules
from p4exec.compiler.compile import Compiler
from p4exec.compiler.compile_state import CompileState
from p4exec.compiler.p4info import build_p4info
from p4exec.compiler.program import compile_file
from p4exec.compiler.pytypes import DataTypeGenerator, header_nbytes, header_pack_expr
from p4exec.errors import P4Error
from p4exec.frontend import ast as A
from p4exec.frontend.parser import parse_file, parse_source

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = sorted(str(p.relative_to(ROOT)) for p in ROOT.glob("p4src/*.p4")) + [
    "tests/p4/03_header_stack.p4", "tests/p4/76_compound_assign.p4", "tests/p4/77_for_loops.p4",
    "tests/p4/79_generic_types.p4", "tests/p4/81_copy_in_out.p4", "tests/p4/82_varbit_options.p4",
]


def _check_and_generate(path: str) -> tuple[Compiler, str]:
    c = Compiler(parse_file(str(ROOT / path)), path)
    c.run()
    return c, c.module_source()


@pytest.mark.parametrize("path", PROGRAMS)
def test_two_compilations_give_identical_code_and_p4info(path: str) -> None:
    first, src1 = _check_and_generate(path)
    second, src2 = _check_and_generate(path)
    assert src1 == src2
    assert build_p4info(first.info).SerializeToString() == build_p4info(second.info).SerializeToString()
    assert first.bind == second.bind


@pytest.mark.parametrize("path", ["p4src/ethplus.p4", "p4src/basic_l3.p4"])
def test_p4info_is_built_from_the_checked_ir_alone(path: str) -> None:
    """P4Info needs only ir.ProgramInfo: built before any Python source is assembled, it equals the one of the
    full compile."""
    c = Compiler(parse_file(str(ROOT / path)), path)
    c.run()
    early = build_p4info(c.info)
    assert early == compile_file(str(ROOT / path)).p4info
    assert len(early.tables) == len(c.info.tables) > 0


def test_data_type_classes_are_generated_from_a_type_alone() -> None:
    """The generator of header/struct classes needs no AST: a checked type is enough."""
    hdr = T.HeaderT("h_t")
    hdr.fields.update({"a": T.Bits(4), "b": T.Bits(12), "c": T.Bits(8, signed=True)})
    outer = T.StructT("s_t")
    outer.fields.update({"h": hdr, "n": T.Bits(16)})
    gen = DataTypeGenerator(CompileState(A.Program([]), "<test>"))
    sname = gen.pyclass(outer)
    hname = gen.pyclass(hdr)
    assert gen.pyclass(hdr) == hname       # one class per type
    ns: dict = {}
    exec(compile(gen.st.class_code.text(), "<classes>", "exec"), ns)   # noqa: S102 - our own generated code
    h = ns[hname]._unpack(0xABCDEF)
    assert (h._v, h.a, h.b, h.c) == (True, 0xA, 0xBCD, -17)     # int<8> 0xEF is -17
    assert eval(header_pack_expr(hdr, "h"), {"h": h}) == 0xABCDEF   # noqa: S307
    assert header_nbytes(hdr, "h") == "3"
    s = ns[sname]()
    assert (s.h._v, s.n) == (False, 0)
    s.h._set(h)
    c = s._copy()
    assert c._eq(s) and c.h is not s.h
    c.h.b = 1
    assert not c._eq(s)


def _parser(body: str) -> A.ParserDecl:
    prog = parse_source("#include <core.p4>\nparser P(packet_in pkt) {\n" + body + "\n}\n", "p.p4")
    return next(d for d in prog.decls if isinstance(d, A.ParserDecl))


def test_backend_rules_run_on_the_ast_without_generating_code() -> None:
    rules = BackendRules(CompileState(A.Program([]), "p.p4"))
    ok = _parser("state start { transition select(8w1) { 1: a; default: accept; } } state a { transition start; }")
    rules.check_parser_terminates(ok, {s.name: i for i, s in enumerate(ok.states)})
    loops = _parser("state start { transition a; } state a { transition start; }")
    with pytest.raises(P4Error, match="never reaches accept or reject") as e:
        rules.check_parser_terminates(loops, {s.name: i for i, s in enumerate(loops.states)})
    assert (e.value.loc.file, e.value.loc.line) == ("p.p4", 2)     # the parser declaration
    assert rules.st.class_code.lines == [] and rules.st.out.lines == []
