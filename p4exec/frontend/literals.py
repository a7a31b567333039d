"""Token text -> AST leaves: annotation bodies and integer literals.

Split out of ``parser`` because both halves of the tree -> AST builder (``build_decls``, ``build``) and the
tests use them, and they need nothing from lark.
"""
from __future__ import annotations

import re

from p4exec.errors import P4Error
from p4exec.frontend import ast as A

# ------------------------------------------------------------------ annotation bodies
_ANNO_TOKEN = re.compile(r'\s*(?:"((?:\\.|[^"\\])*)"|([A-Za-z_][A-Za-z0-9_.]*)|(0[xX][0-9a-fA-F_]+|[0-9][0-9_]*)|(.))')


def _parse_annotation(text: str, loc) -> A.Annotation:
    if text.startswith("@pragma"):
        rest = text[len("@pragma"):].strip()
        parts = rest.split(None, 1)
        return A.Annotation(parts[0] if parts else "pragma", parts[1] if len(parts) > 1 else "", [], loc=loc)
    m = re.match(r"@([A-Za-z_][A-Za-z0-9_]*)\s*", text)
    if m is None:       # the lexer only hands over `@name...` tokens; keep a clear error all the same
        raise P4Error(f"malformed annotation {text[:40]!r}", loc)
    name = m.group(1)
    rest = text[m.end():]
    body = ""
    args: list = []
    if rest.startswith("(") or rest.startswith("["):
        body = rest[1:-1]
        pos = 0
        cur: list = []
        while pos < len(body):
            mm = _ANNO_TOKEN.match(body, pos)
            if not mm:
                break
            pos = mm.end()
            if mm.group(1) is not None:
                cur.append(unescape(mm.group(1)))
            elif mm.group(2) is not None:
                cur.append(mm.group(2))
            elif mm.group(3) is not None:
                cur.append(int(mm.group(3).replace("_", ""), 0))
            elif mm.group(4) == ",":
                args.append(cur[0] if len(cur) == 1 else tuple(cur))
                cur = []
            elif mm.group(4) and mm.group(4).strip():
                if mm.group(4) == "-" and pos < len(body):
                    cur.append("-")
                else:
                    cur.append(mm.group(4))
        if cur:
            args.append(cur[0] if len(cur) == 1 else tuple(cur))
        # fold "-", int into a negative int
        args = [(-a[1]) if isinstance(a, tuple) and len(a) == 2 and a[0] == "-" and isinstance(a[1], int) else a
                for a in args]
    return A.Annotation(name, body, args, loc=loc)


# ------------------------------------------------------------------ integer literals
_INT_RE = re.compile(r"(?:([0-9]+)([ws]))?(.*)", re.S)


def parse_int_literal(text: str, loc) -> A.IntLit:
    m = _INT_RE.fullmatch(text)
    if m is None:       # `(.*)` matches anything; kept for the type checker and a clear error
        raise P4Error(f"malformed integer literal {text!r}", loc)
    width = int(m.group(1)) if m.group(1) else None
    signed = m.group(2) == "s"
    body = m.group(3).replace("_", "")
    low = body.lower()
    if low.startswith("0x"):
        value = int(body[2:], 16)
    elif low.startswith("0b"):
        value = int(body[2:], 2)
    elif low.startswith("0o"):
        value = int(body[2:], 8)
    elif low.startswith("0d"):
        value = int(body[2:], 10)
    else:
        value = int(body, 10)
    if width is not None and width == 0 and not signed:
        raise P4Error("bit width of an integer literal must be positive", loc)
    return A.IntLit(value, width, signed, text, loc=loc)


def unescape(s: str) -> str:
    """A string literal's body with its backslash escapes resolved and every other character kept as written
    (decoding the UTF-8 bytes as escapes would turn "é" into "Ã©", and P4Info would carry that twice-encoded)."""
    try:
        return s.encode("latin-1", "backslashreplace").decode("unicode_escape")
    except UnicodeDecodeError:
        return s
