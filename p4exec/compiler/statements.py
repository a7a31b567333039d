"""Statement code generation (assignments, if/switch, blocks, return/exit) and emission of the Python
function around a compiled body."""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any, cast

from p4exec.compiler import exprgen, tir
from p4exec.compiler import types as T
from p4exec.compiler.compile_state import CompileState
from p4exec.compiler.emit import Emitter, pyident
from p4exec.compiler.parts import CallPart, DataTypePart, DeclarationPart, ExpressionPart
from p4exec.compiler.symbols import LV, E, Sym, expr_text
from p4exec.errors import P4Unsupported
from p4exec.frontend import ast as A


class StatementCompiler:
    """Statements and function emission."""

    calls: CallPart
    decls: DeclarationPart
    exprs: ExpressionPart
    pytypes: DataTypePart

    def __init__(self, st: CompileState) -> None:
        self.st = st

    # ------------------------------------------------------------------ statements
    def new_local(self, name: str) -> str:
        base = "v_" + pyident(name)
        py = base
        i = 1
        while py in self.st.block_ctx.pyused:
            i += 1
            py = f"{base}_{i}"
        self.st.block_ctx.pyused.add(py)
        return py

    def stmts(self, stmts, em: Emitter) -> None:
        for s in stmts:
            self.stmt(s, em)

    def function_body(self, stmts) -> tuple[tir.Stmt, ...]:
        """The statements of an action or control body; with scalar out/inout parameters, inside OutsOnExit so
        that an `exit` carries their values to the callers' copy-out."""
        body = _without_dead_faulting_reads(tuple(self.node(x) for x in stmts), self.pytypes.default_value)
        outs = self.st.block_ctx.out_params
        return (tir.OutsOnExit(tuple(outs), body),) if outs else body

    def stmt(self, s, em: Emitter) -> None:
        """Check one statement and write it."""
        self.emit_stmt(self.node(s), em)

    def node(self, s) -> tir.Stmt:
        """The IR of one statement; helper functions its expressions need (calls with out arguments inside an
        expression, see calls.function_call) come just before it."""
        mark = len(self.st.pending_defs)
        self.st.stmt_depth += 1
        try:
            n = self._node(s)
        finally:
            self.st.stmt_depth -= 1
        if len(self.st.pending_defs) > mark:
            n = tir.Block((*self.st.pending_defs[mark:], n))
            del self.st.pending_defs[mark:]
        return n

    def _node(self, s) -> tir.Stmt:
        if isinstance(s, A.If):
            return self.if_stmt(s)
        if isinstance(s, A.Block):
            self.st.push()
            body = [self.node(x) for x in s.stmts]
            self.st.pop()
            return tir.Block(tuple(body) if body else (tir.Pass(),))
        return self._stmt(s)

    def if_stmt(self, s: A.If) -> tir.If:
        top = s
        outer = chain = self.st.block_ctx.conditional
        arms: list[tuple[tir.Expr, tuple[tir.Stmt, ...]]] = []
        other: tuple[tir.Stmt, ...] | None = None
        decided = False           # an earlier arm's condition is constant true: the rest is dead code
        while True:               # else-if chains become elif (no deep nesting in the generated code)
            c = self.exprs.coerce(self.exprs.expr(s.cond), T.BOOL, s.cond, "if condition")
            chain = chain or c.const is None      # p4c folds a constant condition away
            self.st.block_ctx.conditional = chain
            arms.append((c.node, self._maybe_dead(decided or c.const is False, s.then)))
            decided = decided or c.const is True
            if isinstance(s.other, A.If):
                s = s.other
                continue
            if s.other is not None:
                other = self._maybe_dead(decided, s.other)
            break
        # after an `if` that may return, the rest of the action runs only on some paths
        self.st.block_ctx.conditional = outer or (chain and _may_return(top))
        return tir.If(tuple(arms), other)

    def _maybe_dead(self, dead: bool, s) -> tuple[tir.Stmt, ...]:
        """Compile a branch, marked as dead code when a constant condition rules it out (p4c removes what only
        dead code uses, e.g. a table applied there, from P4Info)."""
        self.st.dead_code += dead
        try:
            return self.sub_nodes(s)
        finally:
            self.st.dead_code -= dead

    def sub_nodes(self, s) -> tuple[tir.Stmt, ...]:
        """The statements of a branch, in a scope of their own."""
        self.st.push()
        body = [self.node(x) for x in s.stmts] if isinstance(s, A.Block) else [self.node(s)]
        self.st.pop()
        return tuple(body)

    @staticmethod
    def assignment(lhs: E, rhs: E) -> tir.Stmt:
        """The IR of `lhs = rhs` (both checked, rhs coerced to lhs's type)."""
        assert lhs.lv is not None
        if T.strip_new(lhs.type).is_scalar or isinstance(T.strip_new(lhs.type), T.TupleT):
            return tir.Assign(lhs.lv.node, rhs.node)
        return tir.SetObject(lhs.node, rhs.node)

    def pin_indices(self, lhs: E) -> tuple[list[tir.Stmt], E]:
        """Evaluate the run-time stack indices of an l-value into locals before the right-hand side: P4 evaluates
        `a[i] = f(...)` left to right, so a call in the right side that changes `i` must not move the target."""
        pins: list[tir.Stmt] = []

        def walk(n: tir.Expr) -> tir.Expr:
            if isinstance(n, tir.StackElemDyn):
                py = self.st.tmp()
                pins.append(tir.Local(py, n.index))
                return replace(n, base=walk(n.base), index=tir.Name(n.index.type, py))
            if isinstance(n, tir.Field | tir.Slice | tir.StackElem):
                return replace(n, base=walk(n.base))
            return n

        assert lhs.lv is not None
        node = walk(lhs.lv.node)
        if not pins:
            return pins, lhs
        return pins, E(lhs.type, node, lhs.const, LV(node), lhs.loc, lhs.extra)

    def _stmt(self, s) -> tir.Stmt:
        """The IR node of a statement other than a block or `if`."""
        if isinstance(s, A.Assign):
            lhs = self.exprs.expr(s.lhs)
            if lhs.lv is None:
                raise self.st.err(f"cannot assign to '{expr_text(s.lhs)}' (not an l-value or read-only)", s.lhs)
            pins, lhs = self.pin_indices(lhs)
            # a compound assignment (`a op= b`, built as `a = a op b` sharing the l-value's AST) reads the
            # l-value already evaluated instead of evaluating its index again
            compound = isinstance(s.rhs, A.Binary) and s.rhs.left is s.lhs
            if compound:
                self.exprs.pinned[id(s.lhs)] = lhs
            try:
                rhs = self.exprs.coerce(self.exprs.expr(s.rhs, lhs.type), lhs.type, s.rhs, "assignment")
            finally:
                self.exprs.pinned.pop(id(s.lhs), None)
            assign = self.assignment(lhs, rhs)
            return tir.Block((*pins, assign)) if pins else assign
        if isinstance(s, A.CallStmt):
            e = self.calls.call(s.call, statement=True)
            if isinstance(e.extra, tir.CallPlan):
                return tir.CallStmt(e.extra)
            if isinstance(e.extra, tir.STATEMENTS):
                return cast(tir.Stmt, e.extra)  # a method or extern call checked into its statement
            if isinstance(e.type, T.VoidT):    # every void call has a plan or statement; never reached
                raise self.st.err(f"unsupported call statement '{expr_text(s.call)}'", s, P4Unsupported)
            return tir.Eval(e.node)
        if isinstance(s, A.Switch):
            if self.st.block_ctx.kind == "action":
                # p4c: "switch statements are not allowed in actions" (they may only appear in apply blocks)
                raise self.st.err("switch statements are not allowed in actions", s)
            return self.switch_stmt(s)
        if isinstance(s, A.Exit):
            if self.st.block_ctx.kind in ("parser", "function"):
                raise self.st.err(f"exit is not allowed in a {self.st.block_ctx.kind}", s)
            self.action_effect("exit", s.loc)
            return tir.Exit()
        if isinstance(s, A.Return):
            if self.st.block_ctx.kind == "parser":
                raise self.st.err("return is not allowed in a parser", s)
            if self.st.block_ctx.kind == "function":
                rt = self.st.block_ctx.ret_type
                if s.value is None:
                    if not isinstance(rt, T.VoidT):
                        raise self.st.err(f"function must return a value of type {rt}", s)
                    return self.return_stmt(None)
                else:
                    if isinstance(rt, T.VoidT):
                        raise self.st.err("a void function cannot return a value", s)
                    v = self.exprs.coerce(self.exprs.expr(s.value, rt), rt, s.value, "return value")
                    return self.return_stmt(self.exprs.objnode(v))
            if s.value is not None:
                raise self.st.err(f"return with a value in a {self.st.block_ctx.kind}", s)
            return self.return_stmt(None)
        if isinstance(s, A.VarDecl):
            t = self.decls.resolve_type(s.type)
            py = self.new_local(s.name)
            if s.init is not None:
                v = self.exprs.coerce(self.exprs.expr(s.init, t), t, s.init, f"initializer of {s.name}")
                value = self.exprs.objnode(v)
            else:
                value = tir.Opaque(t, self.pytypes.default_value(t))
            self.st.declare(s.name, Sym("var", t, py), s)
            return tir.Local(py, value)
        if isinstance(s, A.ConstDecl):
            self.decls.const_decl(s)
            return tir.Block(())                # a constant is the checker's business only
        if isinstance(s, A.Empty):
            return tir.Pass()
        if isinstance(s, A.For):
            return self.for_stmt(s)
        if isinstance(s, A.ForIn):
            return self.for_in_stmt(s)
        if isinstance(s, A.Break | A.Continue):
            word = "break" if isinstance(s, A.Break) else "continue"
            if self.st.block_ctx.loop_depth == 0:
                raise self.st.err(f"'{word}' outside a for loop", s)
            return tir.Break() if isinstance(s, A.Break) else tir.Continue()
        if isinstance(s, A.Instantiation):
            raise self.st.err("instantiations are not allowed inside blocks", s, P4Unsupported)
        raise self.st.err(f"unsupported statement {type(s).__name__}", s, P4Unsupported)

    def action_effect(self, text: str, loc, callee=None) -> None:
        """A call statement or `exit` in an action. p4c-bm2-ss turns an `if` inside an action into conditional
        assignments (predication); a call or an exit has no such form, so on a path that runs only sometimes it
        is an error there ("Conditional execution in actions unsupported on this target"). A called action
        counts with its own first call or exit, as p4c inlines it."""
        if self.st.block_ctx.kind != "action":
            return
        effect = callee.first_effect if callee is not None else (text, loc)
        if effect is None:
            return
        if self.st.block_ctx.conditional:
            raise self.st.err(f"{effect[0]}: Conditional execution in actions unsupported on this target", effect[1])
        action = self.st.block_ctx.action
        if action.first_effect is None:
            action.first_effect = effect

    def loop_body(self, body) -> tuple[tir.Stmt, ...]:
        self.st.block_ctx.loop_depth += 1
        try:
            return self.sub_nodes(body)
        finally:
            self.st.block_ctx.loop_depth -= 1

    def for_stmt(self, s: A.For) -> tir.Stmt:
        """C-style for: the updates run before every test but the first, so `continue` runs them too."""
        self.st.push()
        inits = [self.node(init) for init in s.init]
        cond = None if s.cond is None else self.exprs.coerce(self.exprs.expr(s.cond), T.BOOL, s.cond, "for condition")
        # the condition is checked once, before the updates: names it reads are the loop's own
        first = self.st.tmp() if s.updates else ""
        updates = tuple(self.node(u) for u in s.updates)
        body = self.loop_body(s.body)
        self.st.pop()
        loop = tir.For(None if cond is None else cond.node, updates, first, body)
        return tir.Block((*inits, loop)) if inits else loop

    def for_in_stmt(self, s: A.ForIn) -> tir.Stmt:
        """`for (T x in lo .. hi)` (both ends included) and `for (T x in stack or list)`; x is a copy."""
        t = self.decls.resolve_type(s.type)
        self.st.push()
        py = self.new_local(s.name)
        self.st.declare(s.name, Sym("var", t, py), s)
        loop: tir.Stmt
        if s.hi is not None:
            bt = T.strip_new(t)
            if not isinstance(bt, T.Bits | T.InfIntT):
                raise self.st.err(f"a range loop needs a bit<N>/int<N> variable, not {t}", s.type)
            lo = self.exprs.coerce(self.exprs.expr(s.coll, t), t, s.coll, "range start")
            hi = self.exprs.coerce(self.exprs.expr(s.hi, t), t, s.hi, "range end")
            loop = tir.ForRange(py, lo.node, hi.node, self.loop_body(s.body))
        else:
            coll = self.exprs.expr(s.coll)
            ct = T.strip_new(coll.type)
            if isinstance(ct, T.StackT):
                if not T.same_type(T.strip_new(t), ct.elem):
                    raise self.st.err(f"loop variable of type {t} over a stack of {ct.elem}", s.type)
                item = self.st.tmp()
                loop = tir.ForStack(py, item, coll.node, self.loop_body(s.body))
            elif isinstance(s.coll, A.ListExpr):
                items = tuple(self.exprs.objnode(self.exprs.coerce(self.exprs.expr(x, t), t, x, "loop value"))
                              for x in s.coll.items)
                loop = tir.ForList(py, items, self.loop_body(s.body))
            else:
                raise self.st.err(f"cannot iterate over a value of type {coll.type} (a range a .. b, a header "
                               "stack or a list is expected)", s.coll)
        self.st.pop()
        return loop

    def return_stmt(self, value: tir.Expr | None) -> tir.Return:
        """The IR of a `return` in the current block: the scalar out parameters travel back with it."""
        return tir.Return(value, tuple(self.st.block_ctx.out_params))

    def ret_code(self, value: tir.Expr | None) -> str:
        return exprgen.statement(self.return_stmt(value))[0]

    @staticmethod
    def emit_stmt(s: tir.Stmt, em: Emitter) -> None:
        """Write an IR statement through the generator."""
        for line in exprgen.statement(s):
            em(line)

    def switch_stmt(self, s: A.Switch) -> tir.Switch:
        """Both kinds of switch: on `t.apply().action_run` (labels are the table's action names) and on a value
        (labels are constants of its type). Labels without a body share the next body; a group holding
        `default` becomes the default (its other labels are then redundant)."""
        e = self.exprs.expr(s.expr)
        t = e.type
        tv = self.st.tmp()
        groups: list[tuple[list[tir.Expr | None], Any]] = []
        pending: list[tir.Expr | None] = []
        seen = set()
        has_default = False
        for c in s.cases:
            if c.label is None:
                if has_default:
                    raise self.st.err("duplicate default label", c)
                has_default = True
                pending.append(None)
            else:
                if isinstance(t, T.ActionRunT):
                    if not isinstance(c.label, A.Name):
                        raise self.st.err("switch on action_run needs action names as labels", c.label)
                    names = {a.action.local: a.action for a in t.table.actions}
                    if c.label.name not in names:
                        raise self.st.err(f"'{c.label.name}' is not an action of table {t.table.local}", c.label)
                    key = names[c.label.name].name
                    pending.append(tir.Const(t, key))
                else:
                    lv = self.exprs.coerce(self.exprs.expr(c.label, t), t, c.label, "switch label")
                    if lv.const is None:
                        raise self.st.err("switch label must be a compile-time constant", c.label)
                    key = lv.const
                    pending.append(lv.node)
                if key in seen:
                    raise self.st.err("duplicate switch label", c.label)
                seen.add(key)
            if c.body is not None:
                groups.append((pending, c.body))
                pending = []
        if pending:
            groups.append((pending, None))
        arms: list[tir.SwitchArm] = []
        default: tuple[tir.Stmt, ...] | None = None
        default_body = None
        for labels, body in groups:
            if None in labels:
                default_body = body
                continue
            arms.append(tir.SwitchArm(tuple(x for x in labels if x is not None),
                                      () if body is None else self.sub_nodes(body)))
        if default_body is not None:
            default = self.sub_nodes(default_body)
        return tir.Switch(tv, e.node, tuple(arms), default)

    # ------------------------------------------------------------------ function emission
    _PATH = re.compile(r"\b(?:p|a)_\w+(?:\.\w+)+")

    def emit_function(self, em: Emitter) -> None:
        """Add a generated function to the module, binding header/struct objects used more than once to locals
        (header and struct objects are never replaced during a packet, only assigned in place)."""
        lines = em.lines
        m = re.match(r"\s*def \w+\((.*)\):", lines[0]) if lines else None
        if m is None or len(lines) < 2:
            self.st.out.extend(em)
            return
        params = {x.strip() for x in m.group(1).split(",") if x.strip()}
        body = "\n".join(lines[1:])
        counts: dict[str, int] = {}
        for path in self._PATH.findall(body):
            parts = path.split(".")
            for k in range(2, len(parts) + 1):
                pre = ".".join(parts[:k])
                if pre in self.st.obj_paths and parts[0] in params:
                    counts[pre] = counts.get(pre, 0) + 1
        hoist = [p for p, c in counts.items() if c >= 2]
        if not hoist:
            self.st.out.extend(em)
            return
        hoist.sort(key=lambda p: (p.count("."), p))
        indent = lines[1][:len(lines[1]) - len(lines[1].lstrip())]
        pre_lines = []
        aliases: dict[str, str] = {}
        for i, path in enumerate(hoist):
            alias = f"_o{i}"
            src = path
            for prev in sorted(aliases, key=len, reverse=True):   # build on shorter aliases
                if src.startswith(prev + "."):
                    src = aliases[prev] + src[len(prev):]
                    break
            pre_lines.append(f"{indent}{alias} = {src}")
            aliases[path] = alias
        for path in sorted(aliases, key=len, reverse=True):
            body = re.sub(re.escape(path) + r"(?![\w\[])", aliases[path], body)
        # the alias definitions themselves must keep the original paths
        self.st.out.lines.append(lines[0])
        self.st.out.lines.extend(pre_lines)
        self.st.out.lines.extend(body.split("\n"))


def _may_return(s) -> bool:
    """Whether a statement contains a `return` (actions have no nested declarations that could hold one)."""
    if isinstance(s, A.Return):
        return True
    if isinstance(s, A.Block):
        return any(_may_return(x) for x in s.stmts)
    if isinstance(s, A.If):
        return _may_return(s.then) or (s.other is not None and _may_return(s.other))
    return False


_WORD = re.compile(r"[A-Za-z_]\w*")


def _may_fault(node: Any) -> bool:
    """Whether evaluating `node` may raise a run-time fault: a run-time stack index or a division."""
    return any(isinstance(n, tir.StackElemDyn | tir.Div) for n in tir.walk(node))


def _without_dead_faulting_reads(body: tuple[tir.Stmt, ...],
                                 default: Callable[[T.Type], str]) -> tuple[tir.Stmt, ...]:
    """A local nothing reads afterwards, initialised by a side-effect-free value that may fault (`x = hs[i].f`,
    `x = a / b`), is left at its default: p4c-bm2-ss removes such a dead read, so an out-of-range index there
    touches nothing on BMv2 (docs/p4exec-compiler.md, "Run-time faults"). Other dead locals stay as they are."""
    dead = {n.py for n in tir.walk(body) if isinstance(n, tir.Local) and _may_fault(n.value)
            and not tir.has_effects(n.value)}
    if not dead:
        return body
    uses: dict[str, int] = {}
    for s in tir.python_names(body):
        for w in _WORD.findall(s):
            if w in dead:
                uses[w] = uses.get(w, 0) + 1
    dead = {py for py in dead if uses.get(py, 0) == 1}       # named only by its own declaration
    if not dead:
        return body
    return tir.rewrite(body, lambda n: tir.Local(n.py, tir.Opaque(n.value.type, default(n.value.type)))
                       if isinstance(n, tir.Local) and n.py in dead else None)

