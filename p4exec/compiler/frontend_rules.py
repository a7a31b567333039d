"""Rules p4c's frontend checks on the declarations before anything is instantiated or inlined. They run once
over the AST (not per instance, as the compiler's passes do), so a control instantiated twice does not look
like a duplicate of itself."""
from __future__ import annotations

from collections.abc import Callable

from p4exec.errors import P4Error
from p4exec.frontend import ast as A
from p4exec.frontend.ast import Node


def _action_name(d: A.ActionDecl, control: str | None) -> str:
    """The absolute control-plane name p4c gives an action declaration: `@name` starting with '.' as written,
    otherwise prefixed with the enclosing control's *type* name (or just '.' at the top level)."""
    a = A.anno(d.annos, "name")
    name = a.args[0] if a is not None and a.args and isinstance(a.args[0], str) else d.name
    if name.startswith("."):
        return name
    return f".{control}.{name}" if control else f".{name}"


def check_action_control_plane_names(program: A.Program, err: Callable[[str, Node], P4Error]) -> None:
    """p4c's DuplicateActionControlPlaneNameCheck (p4lang/p4c, 2024; v1.2.4.17 had no such check and merged
    the names): two action declarations may not end up with one control-plane name, e.g. `@name("._drop")`
    on an action in ingress and another in egress. P4Info could list only one of them."""
    seen: dict[str, tuple[A.ActionDecl, str | None]] = {}

    def claim(d: A.ActionDecl, control: str | None) -> None:
        name = _action_name(d, control)
        prev, scope = seen.setdefault(name, (d, control))
        if prev is not d and not (scope == control and prev.name == d.name):
            # (one name declared twice in one scope is the compiler's "duplicate declaration", as in p4c)
            raise err(f"{name}: conflicting control plane name: another action has it (at {prev.loc})", d)

    for decl in program.decls:
        if isinstance(decl, A.ActionDecl):
            claim(decl, None)
        elif isinstance(decl, A.ControlDecl):
            for local in decl.locals:
                if isinstance(local, A.ActionDecl):
                    claim(local, decl.name)
