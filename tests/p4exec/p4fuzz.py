"""Hypothesis strategies for fuzzing p4exec's frontend and checker: random token streams and mutated valid
programs (the corpus in tests/p4). Shared by tests/p4exec/test_frontend_fuzz.py (a few hundred cases per run)
and bench/fuzz_frontend.py (the long run, >= 10,000 cases)."""
from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from hypothesis import strategies as st

from p4exec.compiler.program import compile_source
from p4exec.errors import P4Error
from tests.support.p4corpus import corpus_programs as numbered_programs

CORPUS = Path(__file__).resolve().parents[1] / "p4"

VOCAB = [
    "header", "struct", "header_union", "enum", "typedef", "type", "const", "extern", "parser", "control",
    "package", "action", "table", "key", "actions", "entries", "default_action", "size", "apply", "state",
    "transition", "select", "accept", "reject", "if", "else", "switch", "for", "in", "break", "continue", "exit",
    "return", "out", "inout", "bit", "int", "varbit", "bool", "error", "match_kind", "void", "true", "false",
    "default", "_", "this", "tuple", "list", "value_set", "priority", "abstract", "string",
    "{", "}", "(", ")", "[", "]", "<", ">", ">>", "<<", ";", ":", ",", ".", "=", "==", "!=", "<=", ">=", "+", "-",
    "*", "/", "%", "&", "|", "^", "~", "!", "&&", "||", "&&&", "..", "++", "|+|", "|-|", "?", "+=", "|=", ">>=",
    "@name(\"x\")", "@priority(1)", "@defaultonly", "\"str\"", "0", "1", "8w255", "16w0x800", "4s-3", "0xFFFF",
    "1000000000000000000000", "x", "y", "hdr", "meta", "sm", "pkt", "h_t", "headers_t", "meta_t", "MyIngress",
    "V1Switch", "main", "extract", "emit", "isValid", "setValid", "lookahead", "NoAction", "mark_to_drop",
    "standard_metadata_t", "packet_in", "packet_out", "register", "counter", "hash", "#include <v1model.p4>",
    "\n",
]

_TOKEN = re.compile(r"\s+|//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\])*\"|@\w+(?:\([^()]*\))?|\w+|&&&|\|\+\||\|-\||"
                    r"<<=|>>=|[-+*/%&|^]=|[<>=!]=|&&|\|\||\.\.|\+\+|<<|#[^\n]*|.", re.S)


@cache
def corpus_programs() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(name, tokens) of every corpus program; whitespace and comments are tokens too, so joining them
    gives the program back."""
    return tuple((p.name, tuple(_TOKEN.findall(p.read_text()))) for p in numbered_programs(CORPUS))


def token_streams() -> st.SearchStrategy[str]:
    """Random sequences of P4 tokens, optionally after the v1model includes."""
    body = st.lists(st.sampled_from(VOCAB), min_size=0, max_size=60).map(" ".join)
    return st.tuples(st.booleans(), body).map(
        lambda t: ("#include <core.p4>\n#include <v1model.p4>\n" if t[0] else "") + t[1])


@st.composite
def mutated_programs(draw: st.DrawFn) -> str:
    """A corpus program with 1-4 token edits: delete, duplicate, swap, replace by a vocabulary token, truncate."""
    progs = corpus_programs()
    _name, toks = progs[draw(st.integers(0, len(progs) - 1))]
    out = list(toks)
    for _ in range(draw(st.integers(1, 4))):
        if not out:
            break
        i = draw(st.integers(0, len(out) - 1))
        op = draw(st.sampled_from(["delete", "duplicate", "swap", "replace", "replace", "truncate"]))
        if op == "delete":
            del out[i]
        elif op == "duplicate":
            out.insert(i, out[i])
        elif op == "swap":
            j = draw(st.integers(0, len(out) - 1))
            out[i], out[j] = out[j], out[i]
        elif op == "replace":
            out[i] = " " + draw(st.sampled_from(VOCAB)) + " "
        else:
            del out[i:]
    return "".join(out)


def check_compile(text: str) -> str:
    """Compile ``text``; anything but a located P4Error (or success) is a failure: the error names a real file
    and a line and column (1-based). Returns 'ok', 'error', or 'error in an include' for one located in
    core.p4/v1model.p4 rather than the program (counted by bench/fuzz_frontend.py, not a failure)."""
    try:
        compile_source(text, "fuzz.p4")
    except P4Error as e:
        msg = str(e)
        assert "internal compiler error" not in msg, msg
        assert e.loc.file and not e.loc.file.startswith("<") and e.loc.line >= 1 and e.loc.col >= 1, msg
        return "error" if e.loc.file == "fuzz.p4" else "error in an include"
    return "ok"
