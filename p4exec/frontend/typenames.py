"""The post-lexer that tells type names from other identifiers (split out of ``parser``: its own job).

P4's grammar needs to know which identifiers name types (``(T)x`` is a cast, ``T<...>`` a specialisation,
``x < y`` a comparison); like p4c's lexer, a post-lexer pass classifies them: it scans the token stream once
for type declarations (header/struct/enum/typedef/extern/parser/control/package names, and type parameters
within their declaration) and retypes those identifiers as TYPE_IDENTIFIER. A ``<`` directly after the name
of a generic function/method (``lookahead<bit<8>>()``) becomes L_ANGLE_ARGS.
"""
from __future__ import annotations

_TYPE_START = {"BIT", "INT", "VARBIT", "BOOL", "TUPLE", "ERROR", "STRING", "TYPE_IDENTIFIER", "DONTCARE", "VOID",
               "LIST", "MATCH_KIND"}
_CLOSE = {"GT", "R_ANGLE_SHIFT"}


class _TypeNamePostLex:
    always_accept = ("IDENTIFIER",)

    def process(self, stream):
        toks = list(stream)
        _classify(toks)
        return iter(toks)


def _find_matching_angle(toks, i):
    """toks[i] is '<'; return the index of the matching closing angle (or -1)."""
    depth = 0
    for j in range(i, len(toks)):
        t = toks[j].type
        if t in ("LT", "L_ANGLE_ARGS"):
            depth += 1
        elif t in _CLOSE:
            depth -= 1
            if depth == 0:
                return j
        elif t in ("SEMICOLON", "LBRACE", "RBRACE") or toks[j] in (";", "{", "}"):
            return -1
    return -1


def _decl_end(toks, i):
    """End index of the declaration containing index i: the ';' at depth 0 or the '}' closing its body."""
    depth = 0
    opened = False
    for j in range(i, len(toks)):
        v = toks[j]
        if v in ("{", "("):
            depth += 1
            opened = opened or v == "{"
        elif v in ("}", ")"):
            depth -= 1
            if depth <= 0 and v == "}" and opened:
                return j
        elif v == ";" and depth == 0:
            return j
    return len(toks) - 1


def _classify(toks):
    n = len(toks)
    types: set[str] = set()
    generic_fns: set[str] = set()
    scopes: list[tuple[int, int, set[str]]] = []

    def ident(k):
        return k < n and toks[k].type == "IDENTIFIER"

    def params_at(k):  # toks[k] == '<' of a type parameter list; returns (names, close index)
        close = _find_matching_angle(toks, k)
        if close < 0:
            return set(), k
        return {t.value for t in toks[k + 1:close] if t.type == "IDENTIFIER"}, close

    def function_proto(start, end, scope_end=None):
        """Find the function name in toks[start:end] (before the first '(' at depth 0); mark generics."""
        depth = 0
        for j in range(start, end):
            v = toks[j]
            if v == "<" or toks[j].type in ("LT",):
                depth += 1
            elif toks[j].type in _CLOSE:
                depth -= 1
            elif v == "(" and depth == 0:
                prev = j - 1
                if prev >= start and toks[prev].type in _CLOSE:
                    # walk back to the matching '<'
                    d = 0
                    k = prev
                    while k >= start:
                        if toks[k].type in _CLOSE:
                            d += 1
                        elif toks[k].type == "LT":
                            d -= 1
                            if d == 0:
                                break
                        k -= 1
                    if k > start and ident(k - 1):
                        generic_fns.add(toks[k - 1].value)
                        names = {t.value for t in toks[k + 1:prev] if t.type == "IDENTIFIER"}
                        scopes.append((start, scope_end if scope_end is not None else end, names))
                return

    i = 0
    while i < n:
        t = toks[i]
        ty = t.type
        if ty in ("HEADER", "HEADER_UNION", "STRUCT", "PARSER", "CONTROL", "PACKAGE") and ident(i + 1):
            types.add(toks[i + 1].value)
            if i + 2 < n and toks[i + 2].type == "LT":
                names, _close = params_at(i + 2)
                scopes.append((i + 2, _decl_end(toks, i + 2), names))
        elif ty == "ENUM":
            j = i + 1
            while j < n and toks[j] != "{":
                j += 1
            if j - 1 > i and ident(j - 1):
                types.add(toks[j - 1].value)
        elif ty in ("TYPEDEF", "TYPE") and (i == 0 or toks[i - 1] != "."):
            j = i + 1
            depth = 0
            while j < n and not (toks[j] == ";" and depth == 0):
                if toks[j] in ("{",):
                    depth += 1
                elif toks[j] == "}":
                    depth -= 1
                j += 1
            if ident(j - 1):
                types.add(toks[j - 1].value)
        elif ty == "EXTERN":
            if ident(i + 1) and i + 2 < n and (toks[i + 2] == "{" or toks[i + 2].type == "LT"):
                name = toks[i + 1].value
                types.add(name)
                end = _decl_end(toks, i)
                k = i + 2
                if toks[k].type == "LT":
                    toks[k].type = "L_ANGLE_ARGS"
                    names, close = params_at(k)
                    scopes.append((k, end, names))
                    k = close + 1
                # method prototypes inside the body
                k += 1
                while k < end:
                    m = k
                    while m < end and toks[m] != ";":
                        m += 1
                    function_proto(k, m)
                    k = m + 1
                i = end
            else:
                end = _decl_end(toks, i)
                function_proto(i + 1, end)
                i = end
        i += 1

    # retype
    for i, t in enumerate(toks):
        if t.type == "IDENTIFIER":
            v = t.value
            if v in types or any(a <= i <= b and v in s for a, b, s in scopes):
                t.type = "TYPE_IDENTIFIER"
    for i, t in enumerate(toks):
        if t.type == "LT" and i > 0 and toks[i - 1].type == "IDENTIFIER" and toks[i - 1].value in generic_fns \
                and i + 1 < n and toks[i + 1].type in _TYPE_START:
            t.type = "L_ANGLE_ARGS"
        elif t.type == "LT" and i > 1 and toks[i - 1].type == "TYPE_IDENTIFIER" and toks[i - 1].value in generic_fns \
                and (toks[i - 2] == "." or toks[i - 2].type in _CLOSE or toks[i - 2].type in _TYPE_START):
            # a generic method whose name is also a type (`bit<16> update<T>(...)` beside `control update`):
            # after a '.' or a return type it is the method, as in p4c
            t.type = "L_ANGLE_ARGS"
