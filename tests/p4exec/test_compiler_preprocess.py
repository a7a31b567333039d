"""p4exec's preprocessor: includes, object-like macros, conditionals, and file:line mapping."""
from __future__ import annotations

import pytest

from p4exec.errors import P4Error
from p4exec.frontend.preprocess import preprocess, preprocess_file


def test_define_and_conditionals() -> None:
    pre = preprocess("#define W 8\n#ifdef W\nbit<W> x;\n#else\nbit<16> x;\n#endif\n#ifndef W\nno;\n#endif\n", "a.p4")
    lines = pre.text.split("\n")
    assert lines[2] == "bit<8> x;"
    assert "bit<16>" not in pre.text and "no;" not in pre.text
    assert pre.loc(3, 1).line == 3 and pre.loc(3, 1).file == "a.p4"


def test_if_elif_defined_and_undef() -> None:
    src = "#define A 2\n#if A > 3\none\n#elif defined(A) && A == 2\ntwo\n#else\nthree\n#endif\n#undef A\n#ifdef A\nfour\n#endif\n"
    text = preprocess(src, "x.p4").text
    assert "two" in text and "one" not in text and "three" not in text and "four" not in text


def test_macros_not_expanded_in_strings_or_comments() -> None:
    text = preprocess('#define X 5\n"X" // X\n/* X */ X\n', "s.p4").text
    assert '"X" // X' in text and "/* X */ 5" in text


def test_system_includes_and_line_map(tmp_path) -> None:
    inc = tmp_path / "defs.p4"
    inc.write_text("const bit<8> K = 1;\n")
    main = tmp_path / "main.p4"
    main.write_text('#include <core.p4>\n#include "defs.p4"\nconst bit<8> J = 2;\n')
    pre = preprocess_file(str(main))
    assert "error {" in pre.text                      # core.p4 came in
    idx = pre.text.split("\n").index("const bit<8> K = 1;") + 1
    assert pre.loc(idx, 3).file.endswith("defs.p4") and pre.loc(idx, 3).line == 1
    jdx = pre.text.split("\n").index("const bit<8> J = 2;") + 1
    assert pre.loc(jdx, 1).file.endswith("main.p4") and pre.loc(jdx, 1).line == 3


def test_include_once_guards_in_system_headers() -> None:
    text = preprocess("#include <v1model.p4>\n#include <core.p4>\n#include <v1model.p4>\n", "g.p4").text
    assert text.count("extern packet_in") == 1


@pytest.mark.parametrize("src, msg, line", [
    ('#include "nope.p4"\n', "cannot find include file", 1),
    ("\n#include <psa.p4>\n", "unsupported: architecture", 2),
    ("#define F(x) x\n", "function-like macros", 1),
    ("#ifdef A\n", "unterminated", 1),
    ("#endif\n", "#endif without #if", 1),
    ("\n\n#error stop here\n", "#error stop here", 3),
    ("#frobnicate\n", "unknown preprocessor directive", 1),
])
def test_preprocessor_errors_are_located(src: str, msg: str, line: int) -> None:
    with pytest.raises(P4Error) as ei:
        preprocess(src, "bad.p4")
    assert msg in str(ei.value)
    assert ei.value.loc.file == "bad.p4" and ei.value.loc.line == line
