"""Parse preprocessed P4_16 text into the AST (p4exec.frontend.ast).

Lark LALR with a basic lexer, plus a post-lexer that retypes identifiers naming types as TYPE_IDENTIFIER
(``typenames``); the lark tree becomes the AST in ``build_decls``/``build``, and token text (annotations,
integer literals) is decoded in ``literals``.  This module sets up lark, reports syntax errors and holds the
public entry points; ``parse_int_literal`` and ``name_loc`` are re-exported from here.
"""
from __future__ import annotations

import functools
import re
from pathlib import Path

from lark import Lark
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError

from p4exec.errors import P4Error, P4SyntaxError, SourceLoc
from p4exec.frontend import ast as A
from p4exec.frontend.build import _Builder
from p4exec.frontend.build_decls import name_loc as name_loc  # re-exported: the compiler imports it from here
from p4exec.frontend.literals import parse_int_literal
from p4exec.frontend.preprocess import Preprocessed, preprocess, preprocess_file
from p4exec.frontend.typenames import _TypeNamePostLex
from p4exec.privdir import user_cache_dir


@functools.lru_cache(maxsize=1)
def _lark() -> Lark:
    grammar = (Path(__file__).resolve().parent / "p4.lark").read_text()
    # lark's cache is a pickle it loads back: kept in a directory only we can write (cache=True would use a
    # predictable name in /tmp, which another user could plant first)
    cache_dir = user_cache_dir("p4exec")
    cache: bool | str = str(cache_dir / "p4-grammar.lark-cache") if cache_dir is not None else False
    return Lark(grammar, parser="lalr", lexer="basic", postlex=_TypeNamePostLex(), propagate_positions=True,
                maybe_placeholders=True, cache=cache)


_PRETTY = {
    "LPAR": "'('", "RPAR": "')'", "LBRACE": "'{'", "RBRACE": "'}'", "LSQB": "'['", "RSQB": "']'",
    "SEMICOLON": "';'", "COLON": "':'", "COMMA": "','", "EQUAL": "'='", "DOT": "'.'", "QMARK": "'?'",
    "IDENTIFIER": "identifier", "TYPE_IDENTIFIER": "type name", "INTEGER": "integer", "STRING_LITERAL": "string",
    "L_ANGLE_ARGS": "'<'", "R_ANGLE_SHIFT": "'>'", "GT": "'>'", "LT": "'<'", "$END": "end of input",
}


def _pretty_terminal(name: str) -> str:
    if name in _PRETTY:
        return _PRETTY[name]
    try:
        for t in _lark().terminals:
            if t.name == name and t.pattern.type == "str":
                return repr(t.pattern.value)
    except Exception:  # pragma: no cover
        pass
    return name.lower()


def _syntax_error(e: UnexpectedInput, pre: Preprocessed) -> P4SyntaxError:
    err = _syntax_error_at(e, pre)
    line = getattr(e, "line", 0) or 0
    if err.loc is not None and err.loc.file in ("<core.p4>", "<v1model.p4>"):
        return _in_users_file(err, pre, line)
    return err


def _in_users_file(err: P4SyntaxError, pre: Preprocessed, line: int) -> P4SyntaxError:
    """A syntax error inside a system header is the user's: a declaration left open before the `#include`
    (the headers themselves parse). Point at that `#include` line of the user's file, naming where the parser
    stopped, so the location is one the user can edit."""
    inc = err.loc.file if err.loc is not None else ""
    user: tuple[str, int] | None = None
    for f, ln in reversed(pre.linemap[:max(line - 1, 0)]):
        if not f.startswith("<"):
            user = (f, ln)
            break
    if user is None:
        return err
    fname, last = user
    where = SourceLoc(fname, last, 1)
    try:
        with open(fname, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().split("\n")
        pat = re.compile(r"^\s*#\s*include\s*[<\"]" + re.escape(inc.strip("<>")) + r"[>\"]")
        for i in range(last, len(lines)):
            if pat.match(lines[i]):
                where = SourceLoc(fname, i + 1, 1)
                break
    except OSError:
        pass
    return P4SyntaxError(f"{err.message} (at {err.loc} while reading {inc}: is a declaration before this #include "
                         f"left unfinished?)", where)


def _syntax_error_at(e: UnexpectedInput, pre: Preprocessed) -> P4SyntaxError:
    loc = pre.loc(getattr(e, "line", 0) or 0, getattr(e, "column", 0) or 0)
    expected = sorted({_pretty_terminal(x) for x in (getattr(e, "expected", None) or getattr(e, "allowed", None)
                                                    or ())})
    exp = ""
    if expected:
        if len(expected) > 8:
            expected = expected[:8] + ["..."]
        exp = "; expected " + ", ".join(expected)
    if isinstance(e, UnexpectedToken):
        tok = e.token
        if tok.type == "$END":
            return P4SyntaxError(f"syntax error: unexpected end of input{exp}", loc)
        raw = set(getattr(e, "expected", None) or ())
        if tok.type == "IDENTIFIER" and "TYPE_IDENTIFIER" in raw and "IDENTIFIER" not in raw:
            return P4SyntaxError(f"unknown type '{tok.value}' (a type name is expected here)", loc)
        return P4SyntaxError(f"syntax error: unexpected {tok.value!r}{exp}", loc)
    if isinstance(e, UnexpectedCharacters):
        pos = e.pos_in_stream
        ch = pre.text[pos] if pos is not None and pos < len(pre.text) else "?"
        return P4SyntaxError(f"syntax error: unexpected character {ch!r}", loc)
    if isinstance(e, UnexpectedEOF):
        return P4SyntaxError(f"syntax error: unexpected end of input{exp}", loc)
    return P4SyntaxError(f"syntax error: {e}", loc)


def parse_preprocessed(pre: Preprocessed) -> A.Program:
    try:
        tree = _lark().parse(pre.text)
    except UnexpectedInput as e:
        raise _syntax_error(e, pre) from None
    try:
        return _Builder(pre).transform(tree)
    except VisitError as e:
        if isinstance(e.orig_exc, P4Error):
            raise e.orig_exc from None
        if isinstance(e.orig_exc, RecursionError):
            raise P4Error("nesting too deep", _where(e.obj, pre)) from None
        raise
    except RecursionError:
        raise P4Error("nesting too deep", pre.loc(1, 1)) from None


def _where(node, pre: Preprocessed) -> SourceLoc:
    """Where a tree node or token starts, in the user's file (line 1 if lark kept no position)."""
    meta = getattr(node, "meta", None)
    line = getattr(meta, "line", None) or getattr(node, "line", None)
    column = getattr(meta, "column", None) or getattr(node, "column", None)
    return pre.loc(line or 1, column or 1)


def parse_source(text: str, filename: str = "<input>", include_dirs: list[str] | None = None) -> A.Program:
    return parse_preprocessed(preprocess(text, filename, include_dirs))


def parse_file(path: str, include_dirs: list[str] | None = None) -> A.Program:
    return parse_preprocessed(preprocess_file(path, include_dirs))


def lex_only(text: str):  # for tests/debugging
    return list(_lark().lex(text))


__all__ = ["parse_source", "parse_file", "parse_preprocessed", "parse_int_literal", "SourceLoc"]
