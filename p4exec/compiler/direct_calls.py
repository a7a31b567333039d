"""Direct invocation of a parser/control type (`C.apply(...)`): an implicit instance per call site.

As p4c's InstantiateDirectCalls does, each call becomes a local instance `C_inst` (then `C_inst_1`, ...) named
`@name("C")` for the control plane, so a table `t` inside a directly applied `C` in `MyIngress` is
`MyIngress.C.t` in P4Info.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator

from p4exec.frontend import ast as A


def _calls(node: object) -> Iterator[A.Call]:
    if isinstance(node, list):
        for x in node:
            yield from _calls(x)
        return
    if not isinstance(node, A.Node):
        return
    if isinstance(node, A.Call) and isinstance(node.func, A.TypeMember) and node.func.name == "apply":
        yield node
    for f in dataclasses.fields(node):
        if f.name != "loc":
            yield from _calls(getattr(node, f.name))


def instantiate_direct_calls(decl: A.ParserDecl | A.ControlDecl, is_block_type: Callable[[str], bool]) -> None:
    """Rewrite every `T.apply(args)` in ``decl`` whose T is a parser/control into `T_inst.apply(args)` plus a
    local instance; runs once per declaration (the rewritten calls no longer match)."""
    body: list[object] = list(decl.states) if isinstance(decl, A.ParserDecl) else [decl.body]
    taken = {getattr(d, "name", "") for d in decl.locals}
    added: list[A.Decl] = []
    for call in list(_calls(body + list(decl.locals))):
        tm = call.func
        assert isinstance(tm, A.TypeMember)
        tref = tm.type
        if not isinstance(tref, A.NamedType) or not is_block_type(tref.name):
            continue
        name = f"{tref.name}_inst"
        i = 0
        while name in taken:
            i += 1
            name = f"{tref.name}_inst_{i}"
        taken.add(name)
        loc = call.loc
        inst = A.Instantiation(name, tref, [], loc=loc)
        inst.annos = [A.Annotation("name", f'"{tref.name}"', [tref.name], loc=loc)]
        added.append(inst)
        call.func = A.Member(A.Name(name, loc=loc), "apply", loc=loc)
    decl.locals[:0] = added
