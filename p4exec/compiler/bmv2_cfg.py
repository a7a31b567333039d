"""p4c-bm2-ss's rule for a table applied at more than one place in a pipeline.

BMv2's JSON gives every table one set of successors (`next_tables`, `base_default_next`). p4c-bm2-ss therefore
builds the control-flow graph of the ingress and egress controls (sub-controls inlined, every statement that is
not a table apply turned into a table of its own) and accepts a table applied at several places only when

- no path leads from a table back to the same table ("Program can not be implemented on this target since it
  contains a path from table X back to itself"), and
- every place it is applied at continues with the same successors ("Program is not supported by this target,
  because table X has multiple successors"): the same number of edges, each to the same node or to the same
  table.

So `if (c) { t.apply(); } else { t.apply(); }` is accepted (both continue after the `if`), `t.apply();
t.apply();` is not, and neither is `if (c) { t.apply(); x = 1; } else { t.apply(); }`. This module rebuilds
that graph from the AST, after the rest of the checks (p4c finds these in its back end, last). Statements that
are not control flow count as one node each: p4c groups consecutive ones into one synthesized table, which
changes no node's successors. A condition folded to a constant by p4c is recognised only as a literal.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from p4exec.errors import P4Error, SourceLoc
from p4exec.frontend import ast as A


@dataclass(eq=False)
class Node:
    table: str | None             # the table's control-plane name; None for conditions and other statements
    loc: SourceLoc | None
    succs: list[Edge] = field(default_factory=list)


@dataclass(eq=False)
class Edge:
    endpoint: Node
    label: str = ""               # "true"/"false" of a condition, an action_run label, "" otherwise


@dataclass
class _Scope:
    prefix: str                   # control-plane prefix of the (inlined) control: "MyIngress.inner"
    decl: A.ControlDecl
    returns: list[Edge] | None    # edges of `return` inside an inlined control; None at the top level
    site: SourceLoc | None = None  # where the top-level control applies the inlined one (errors point there)


Resolve = Callable[[A.Instantiation], A.ControlDecl | None]
Qualify = Callable[[str, str, list], str]


class ControlFlowGraph:
    """The graph of one top-level control; `check()` raises p4c-bm2-ss's error as a located P4Error."""

    def __init__(self, decl: A.ControlDecl, prefix: str, resolve: Resolve, qualify: Qualify) -> None:
        self.nodes: list[Node] = []
        self.resolve = resolve
        self.qualify = qualify
        self.exit = Node(None, None)
        live = [Edge(self._node(None, decl.loc))]
        live = self._control(_Scope(prefix, decl, None), live)
        self._connect(live, self.exit)

    # ------------------------------------------------------------------ building
    def _node(self, table: str | None, loc: SourceLoc | None) -> Node:
        n = Node(table, loc)
        self.nodes.append(n)
        return n

    @staticmethod
    def _connect(live: list[Edge], dst: Node) -> None:
        for e in live:
            e.endpoint.succs.append(Edge(dst, e.label))

    def _step(self, live: list[Edge], table: str | None, loc: SourceLoc | None) -> Node:
        n = self._node(table, loc)
        self._connect(live, n)
        return n

    def _control(self, scope: _Scope, live: list[Edge]) -> list[Edge]:
        if any(isinstance(d, A.VarDecl) and d.init is not None for d in scope.decl.locals):
            live = [Edge(self._step(live, None, scope.decl.loc))]     # the locals' initialisation
        return self._stmt(scope.decl.body, scope, live)

    def _table_of(self, e: A.Expr, scope: _Scope) -> str | None:
        """`t` in `t.apply()` when t is a table of the control being walked."""
        if isinstance(e, A.Name):
            for d in scope.decl.locals:
                if isinstance(d, A.TableDecl) and d.name == e.name:
                    return self.qualify(scope.prefix, d.name, d.annos)
        return None

    def _instance_of(self, e: A.Expr, scope: _Scope) -> tuple[A.Instantiation, A.ControlDecl] | None:
        if isinstance(e, A.Name):
            for d in scope.decl.locals:
                if isinstance(d, A.Instantiation) and d.name == e.name:
                    c = self.resolve(d)
                    return (d, c) if c is not None else None
        return None

    def _applied_table(self, e: A.Expr | None, scope: _Scope, member: str) -> str | None:
        """The table of `t.apply().<member>`."""
        if isinstance(e, A.Member) and e.name == member and isinstance(e.expr, A.Call):
            f = e.expr.func
            if isinstance(f, A.Member) and f.name == "apply":
                return self._table_of(f.expr, scope)
        return None

    def _nested_applies(self, e: object, scope: _Scope, live: list[Edge]) -> list[Edge]:
        """Tables applied inside an expression: p4c moves each apply before the statement, then evaluates
        the expression in a synthesized action."""
        found: list[tuple[str, SourceLoc | None]] = []

        def walk(x: object) -> None:
            if isinstance(x, list):
                for y in x:
                    walk(y)
                return
            if not isinstance(x, A.Node):
                return
            if isinstance(x, A.Call) and isinstance(x.func, A.Member) and x.func.name == "apply":
                t = self._table_of(x.func.expr, scope)
                if t is not None:
                    found.append((t, scope.site or x.loc))
            for k, v in vars(x).items():
                if k != "loc":
                    walk(v)

        walk(e)
        for t, loc in found:
            live = [Edge(self._step(live, t, loc))]
            live = [Edge(self._step(live, None, loc))]
        return live

    def _stmt(self, s: object, scope: _Scope, live: list[Edge]) -> list[Edge]:
        if isinstance(s, A.Block):
            for x in s.stmts:
                live = self._stmt(x, scope, live)
            return live
        if isinstance(s, A.Empty | A.ConstDecl) or (isinstance(s, A.VarDecl) and s.init is None):
            return live
        if isinstance(s, A.Return):
            if scope.returns is None:
                self._connect(live, self.exit)
            else:
                scope.returns.extend(live)
            return []
        if isinstance(s, A.Exit):
            self._step(live, None, s.loc)       # BMv2 runs `exit` as a primitive of a synthesized action
            return []
        if isinstance(s, A.If):
            return self._if(s, scope, live)
        if isinstance(s, A.Switch):
            return self._switch(s, scope, live)
        if isinstance(s, A.CallStmt) and isinstance(s.call.func, A.Member) and s.call.func.name == "apply":
            target = s.call.func.expr
            t = self._table_of(target, scope)
            if t is not None:
                live = self._nested_applies(s.call.args, scope, live)
                return [Edge(self._step(live, t, scope.site or s.call.loc))]
            inst = self._instance_of(target, scope)
            if inst is not None:
                live = self._nested_applies(s.call.args, scope, live)
                d, c = inst
                inner = _Scope(self.qualify(scope.prefix, d.name, d.annos), c, [], scope.site or s.call.loc)
                out = self._control(inner, live)
                return out + (inner.returns or [])
        # an assignment, an extern/method/action call, an initialised local: one synthesized table
        live = self._nested_applies(s, scope, live)
        return [Edge(self._step(live, None, getattr(s, "loc", None)))]

    def _if(self, s: A.If, scope: _Scope, live: list[Edge]) -> list[Edge]:
        if isinstance(s.cond, A.BoolLit):                 # folded by p4c
            branch = s.then if s.cond.value else s.other
            return self._stmt(branch, scope, live) if branch is not None else live
        t_true, t_false = "true", "false"
        cond: A.Expr = s.cond
        if isinstance(cond, A.Unary) and cond.op == "!":
            t_true, t_false = t_false, t_true
            cond = cond.expr
        table = self._applied_table(cond, scope, "hit")
        if table is None and (table := self._applied_table(cond, scope, "miss")) is not None:
            t_true, t_false = t_false, t_true
        if table is None:
            t_true, t_false = "true", "false"
            if _empty(s.then) and (s.other is None or _empty(s.other)) and not _has_apply(s.cond):
                return live                                # removed by p4c's control-flow simplification
            live = self._nested_applies(s.cond, scope, live)
            node = self._step(live, None, s.loc)
        else:
            node = self._step(live, table, scope.site or s.cond.loc)
        out = self._stmt(s.then, scope, [Edge(node, t_true)])
        other = [Edge(node, t_false)]
        if s.other is not None:
            other = self._stmt(s.other, scope, other)
        return out + other

    def _switch(self, s: A.Switch, scope: _Scope, live: list[Edge]) -> list[Edge]:
        table = self._applied_table(s.expr, scope, "action_run")
        if table is None:
            live = self._nested_applies(s.expr, scope, live)
        node = self._step(live, table, scope.site or s.expr.loc)
        result = [Edge(node)]                 # no label matches
        labels: list[Edge] = []
        for c in s.cases:
            labels.append(Edge(node, _label(c.label)))
            if c.body is not None:
                result += self._stmt(c.body, scope, labels)
                labels = []
        return result

    # ------------------------------------------------------------------ checking
    def check(self) -> None:
        visited: set[int] = set()
        for n in self.nodes:
            self._dfs(n, visited, [])
        by_table: dict[str, list[Node]] = {}
        for n in self.nodes:
            if n.table is not None:
                by_table.setdefault(n.table, []).append(n)
        for table, ns in by_table.items():
            first = ns[0]
            for other in ns[1:]:
                if not _same_successors(first, other):
                    raise P4Error(f"table {table} is applied here and at {first.loc}, with different "
                                  f"successors: Program is not supported by this target, because table {table} "
                                  "has multiple successors (p4c-bm2-ss: BMv2 gives a table one set of "
                                  "successors)", other.loc)

    def _dfs(self, n: Node, visited: set[int], stack: list[Node]) -> None:
        if n.table is not None:
            for s in stack:
                if s.table == n.table:
                    raise P4Error(f"table {n.table} is applied again after its application at {s.loc}: Program "
                                  f"can not be implemented on this target since it contains a path from table "
                                  f"{n.table} back to itself (p4c-bm2-ss)", n.loc)
        if id(n) in visited:
            return
        if n.table is not None:
            stack.append(n)
        for e in n.succs:
            self._dfs(e.endpoint, visited, stack)
        if n.table is not None:
            stack.pop()
        visited.add(id(n))


def _label(e: A.Expr | None) -> str:
    if e is None:
        return "default"
    if isinstance(e, A.Name):
        return e.name
    return "?"


def _same_destination(a: Node, b: Node) -> bool:
    return a is b or (a.table is not None and a.table == b.table)


def _same_successors(x: Node, y: Node) -> bool:
    if len(x.succs) != len(y.succs):
        return False
    return (all(any(_same_destination(e.endpoint, f.endpoint) for f in y.succs) for e in x.succs)
            and all(any(_same_destination(f.endpoint, e.endpoint) for e in x.succs) for f in y.succs))


def _empty(s: object) -> bool:
    if isinstance(s, A.Block):
        return all(_empty(x) for x in s.stmts)
    return isinstance(s, A.Empty | A.ConstDecl) or (isinstance(s, A.VarDecl) and s.init is None)


def _has_apply(e: object) -> bool:
    if isinstance(e, list):
        return any(_has_apply(x) for x in e)
    if not isinstance(e, A.Node):
        return False
    if isinstance(e, A.Call) and isinstance(e.func, A.Member) and e.func.name == "apply":
        return True
    return any(_has_apply(v) for k, v in vars(e).items() if k != "loc")
