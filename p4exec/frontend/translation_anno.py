"""`@p4runtime_translation("uri", W | string | bit<W>)`: the annotation's own little grammar, read as p4c reads it.

p4c parses the annotation's body only when P4Info needs the type (the type or typedef is used by code that
survives its mid-end); a malformed body then stops the compile with a bison syntax error at the offending token.
This module gives the same verdict and reason, and the parsed value that P4Info (`translated_type`) and the
P4Runtime server's translation (p4exec/p4runtime/sdn_translation.py) use.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from p4exec.errors import P4Error, SourceLoc
from p4exec.frontend import ast as A

ANNOTATION = "p4runtime_translation"


@dataclass(frozen=True)
class Translation:
    """The controller sees `uri`-named values: `sdn_bitwidth` bits wide, or strings when it is None."""
    uri: str
    sdn_bitwidth: int | None

    @property
    def sdn_string(self) -> bool:
        return self.sdn_bitwidth is None


# p4c's lexer classes for the tokens that can appear in the body (names as bison prints them)
_TOKEN = re.compile(r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<int>[0-9]+[ws][0-9a-fA-FxXoObB_]+|0[xX][0-9a-fA-F_]+|'
                    r'0[bB][01_]+|0[oO][0-7_]+|[0-9][0-9_]*)|(?P<id>[A-Za-z_][A-Za-z0-9_]*)|(?P<punct>\S))')
_KEYWORDS = {"bit": "BIT", "string": "STRING", "int": "INT", "bool": "BOOL", "varbit": "VARBIT"}


@dataclass(frozen=True)
class _Tok:
    kind: str       # STRING_LITERAL, INTEGER, IDENTIFIER, a keyword, END_ANNOTATION or the punctuation itself
    text: str
    offset: int     # in the body

    def shown(self) -> str:
        """How bison names it in `unexpected X`: quoted for ',', bare for other punctuation."""
        return '","' if self.kind == "," else self.kind


def _tokens(body: str) -> list[_Tok]:
    out: list[_Tok] = []
    pos = 0
    while True:
        m = _TOKEN.match(body, pos)
        if m is None:
            break
        start = m.start(m.lastgroup or 0)
        text = m.group(m.lastgroup or 0)
        if m.lastgroup == "str":
            kind = "STRING_LITERAL"
        elif m.lastgroup == "int":
            kind = "INTEGER"
        elif m.lastgroup == "id":
            kind = _KEYWORDS.get(text, "IDENTIFIER")
        else:
            kind = text
        out.append(_Tok(kind, text, start))
        pos = m.end()
    out.append(_Tok("END_ANNOTATION", "", len(body)))
    return out


def _int_value(a: A.Annotation, tok: _Tok) -> int:
    """A P4 integer literal's value (`32`, `0x20`, `8w32`)."""
    m = re.fullmatch(r"[0-9]+[ws](.+)", tok.text)
    digits = (m.group(1) if m else tok.text).replace("_", "")
    try:
        return int(digits) if digits.isdigit() else int(digits, 0)
    except ValueError:
        raise P4Error(f"malformed @{ANNOTATION}: bad integer literal {tok.text!r}", _loc(a, tok)) from None


def _loc(a: A.Annotation, tok: _Tok) -> SourceLoc:
    """p4c points at the offending token; the end of the body is reported at the annotation itself."""
    loc = a.loc
    if loc is None:
        return SourceLoc("<unknown>", 0, 0)
    if tok.kind == "END_ANNOTATION" or "\n" in a.body[: tok.offset]:
        return loc
    return SourceLoc(loc.file, loc.line, loc.col + len(a.name) + 2 + tok.offset)


def parse_translation(a: A.Annotation) -> Translation:
    """The annotation's value, or a P4Error with p4c's reason at the offending token."""
    toks = _tokens(a.body or "")
    i = 0

    def expect(kinds: tuple[str, ...], expecting: str) -> _Tok:
        nonlocal i
        tok = toks[i]
        if tok.kind not in kinds:
            raise P4Error(f"malformed @{ANNOTATION}: syntax error, unexpected {tok.shown()}, expecting {expecting}",
                          _loc(a, tok))
        i += 1
        return tok

    uri = expect(("STRING_LITERAL",), "STRING_LITERAL")
    expect((",",), '","')
    kind = expect(("BIT", "STRING", "INTEGER"), "BIT or STRING or INTEGER")
    width: int | None
    if kind.kind == "STRING":
        width = None
    elif kind.kind == "INTEGER":
        width = _int_value(a, kind)
    else:
        expect(("<",), "<")
        width = _int_value(a, expect(("INTEGER",), "INTEGER"))
        expect((">",), ">")
    expect(("END_ANNOTATION",), "END_ANNOTATION")
    return Translation(_unescape(uri.text[1:-1]), width)


def _unescape(text: str) -> str:
    """The string literal's value (`\\"` and friends); kept as written when an escape is not one."""
    try:
        return text.encode("utf-8").decode("unicode_escape").encode("latin-1").decode("utf-8")
    except (UnicodeDecodeError, UnicodeEncodeError):
        return text
