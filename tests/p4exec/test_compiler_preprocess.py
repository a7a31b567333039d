"""p4exec's preprocessor (cpp, as p4c runs it): includes, macros, conditionals, limits, and file:line:col."""
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


def test_macros_not_expanded_in_strings_comments_dropped() -> None:
    text = preprocess('#define X 5\n"X" // X\n/* X */ X\n', "s.p4").text
    assert '"X"' in text and "// X" not in text
    assert text.split("\n")[2] == "        5"        # the comment became blanks: 5 stays in column 9


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
    ("#ifdef A\n", "unterminated", 1),
    ("#endif\n", "#endif without #if", 1),
    ("\n\n#error stop here\n", "#error stop here", 3),
    ("#frobnicate\n", "invalid preprocessing directive", 1),
    ("\n#if 9**9**9 > 1\n#endif\n", "operator '*' has no right operand", 2),
])
def test_preprocessor_errors_are_located(src: str, msg: str, line: int) -> None:
    with pytest.raises(P4Error) as ei:
        preprocess(src, "bad.p4")
    assert msg in str(ei.value)
    assert ei.value.loc.file == "bad.p4" and ei.value.loc.line == line


def test_function_like_stringify_paste_and_variadic_macros() -> None:
    src = ('#define ADD(a, b) ((a) + (b))\n#define NAME(p, s) p##_##s\n#define STR(x) #x\n'
           '#define FIRST(x, ...) x\n#define REST(x, ...) __VA_ARGS__\n'
           'ADD(1, 2) NAME(ipv4, t) STR(hi there) FIRST(7, 8, 9) REST(7, 8, 9)\n')
    line = preprocess(src, "m.p4").text.split("\n")[5].split()
    assert " ".join(line) == '((1) + (2)) ipv4_t "hi there" 7 8, 9'


@pytest.mark.parametrize("cond, taken", [
    ("0x10 == 16", True),            # C integer literals (hex), not Python's eval
    ("010 == 8", True),              # octal
    ("defined(A) && !defined(B)", True),
    ("defined A && A * 2 == 6", True),
    ("(1 ? 2 : 3) == 2", True),
    ("UNDEFINED_NAME == 0", True),   # undefined identifiers are 0
    ("-1 < 0u", False),              # usual arithmetic conversions: -1 becomes unsigned
])
def test_if_arithmetic_follows_c(cond: str, taken: bool) -> None:
    text = preprocess(f"#define A 3\n#if {cond}\nyes\n#else\nno\n#endif\n", "c.p4").text
    assert ("yes" in text, "no" in text) == (taken, not taken)


def test_line_directive_moves_locations() -> None:
    pre = preprocess('a\n#line 40 "gen.p4"\nb\n', "l.p4")
    idx = pre.text.split("\n").index("b") + 1
    assert (pre.loc(idx, 1).file, pre.loc(idx, 1).line) == ("gen.p4", 40)


def test_p4c_guard_names_and_v1model_version() -> None:
    src = ("#include <v1model.p4>\n#if defined(_CORE_P4_) && defined(_V1_MODEL_P4_) && V1MODEL_VERSION == 20180101\n"
           "guards_ok\n#endif\n")
    assert "guards_ok" in preprocess(src, "v.p4").text
    newer = preprocess("#define V1MODEL_VERSION 20200408\n#include <v1model.p4>\n", "n.p4").text
    assert "PortId_t" in newer


def test_columns_point_into_the_source_despite_blank_runs() -> None:
    src = "const   bit<8>\tK  =  /* note */   1;\n"
    line = preprocess(src, "col.p4").text.split("\n")[0]
    assert line.index("K") == src.index("K") and line.index("1;") == src.index("1;")


def test_syntax_error_column_after_a_comment() -> None:
    from p4exec.frontend.parser import parse_source
    with pytest.raises(P4Error) as ei:
        parse_source("/* a comment */   const bit<8> K = ;\n", "e.p4")
    assert (ei.value.loc.line, ei.value.loc.col) == (1, 36)


def test_macro_bomb_is_stopped_by_the_limits() -> None:
    from p4exec.frontend.preprocess import CppLimits
    bomb = "#define A0 x x\n" + "".join(f"#define A{i + 1} A{i} A{i}\n" for i in range(40)) + "A40\n"
    with pytest.raises(P4Error) as ei:
        preprocess(bomb, "bomb.p4", limits=CppLimits(cpu_s=5, wall_s=10, output_bytes=1 << 20))
    assert "limit" in str(ei.value) and ei.value.loc.file == "bomb.p4"


def test_cpp_errors_keep_cpp_locations() -> None:
    with pytest.raises(P4Error) as ei:
        preprocess("x\n  #include\n", "i.p4")
    assert (ei.value.loc.file, ei.value.loc.line, ei.value.loc.col) == ("i.p4", 2, 11)  # where cpp (and p4c) say


def _compile_peak_rss_kib(path) -> int:
    import subprocess
    import sys
    from pathlib import Path

    p4exec = Path(sys.executable).parent / "p4exec"
    probe = ("import resource, subprocess, sys\n"
             "r = subprocess.run(sys.argv[1:], capture_output=True)\n"
             "assert r.returncode == 0, r.stderr[-300:]\n"
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    out = subprocess.run([sys.executable, "-c", probe, str(p4exec), "compile", str(path), "-o", str(path) + ".json"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-500:]
    return int(out.stdout)


def test_a_megabyte_block_comment_costs_little_compile_memory(tmp_path) -> None:
    """Issue 15: a 1 MB block comment cost 327 MB (the comment travelled through lexer and line map); cpp drops
    it, so compiling costs about what the program without it costs."""
    from pathlib import Path

    src = (Path(__file__).resolve().parents[1] / "p4runtime" / "cpu_l2.p4").read_text()
    plain, commented = tmp_path / "plain.p4", tmp_path / "commented.p4"
    plain.write_text(src)
    commented.write_text("/*" + "x" * (1 << 20) + "*/\n" + src)
    base, big = _compile_peak_rss_kib(plain), _compile_peak_rss_kib(commented)
    assert big < base + 64 * 1024, (base, big)


def test_no_compiler_predefined_macros_but_p4exec_ones() -> None:
    text = preprocess("unix linux __GNUC__ __x86_64__\n#ifdef __p4exec__\nours\n#endif\n", "u.p4").text
    assert text.split("\n")[0].split() == ["unix", "linux", "__GNUC__", "__x86_64__"] and "ours" in text
