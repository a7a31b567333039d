"""Rules of p4c-bm2-ss's back end that p4exec enforces on the checked program (docs/p4exec-compiler.md, "What
p4c-bm2-ss's back end rejects"): a table applied at several places (bmv2_cfg), direct-meter reads, parsers
that never terminate, what the checksum controls may contain. They decide validity only and write no Python; each
runs where p4c would report its error first (the checksum controls before they are compiled, a parser after its
states, the rest after the whole program)."""
from __future__ import annotations

from p4exec.compiler import types as T
from p4exec.compiler.bmv2_cfg import ControlFlowGraph
from p4exec.compiler.compile_state import CompileState
from p4exec.compiler.parts import DeclarationPart, TablePart
from p4exec.errors import P4Unsupported
from p4exec.frontend import ast as A


class BackendRules:
    """p4c-bm2-ss's whole-program and per-block rules, over the AST and the ProgramInfo being built."""

    decls: DeclarationPart
    tables: TablePart

    def __init__(self, st: CompileState) -> None:
        self.st = st

    def check_pipeline_control_flow(self) -> None:
        """p4c-bm2-ss's back-end rule for tables applied more than once (see bmv2_cfg); checked last, as p4c
        finds it after every other error."""
        def control_of(inst: A.Instantiation) -> A.ControlDecl | None:
            t = self.decls.resolve_type(inst.type)
            if isinstance(t, T.BlockT) and t.kind == "control" and isinstance(t.decl, A.ControlDecl):
                return t.decl
            return None

        for decl, prefix in self.st.pipeline_controls:
            ControlFlowGraph(decl, prefix, control_of, self.tables.fq).check()

    def check_direct_meter_reads(self) -> None:
        for inst in self.st.info.externs.values():
            if inst.kind != "direct_meter" or not inst.tables:
                continue
            owner = self.st.info.tables[inst.tables[0]]
            if inst.read_target is None:
                raise self.st.err(f"{owner.name}: table with direct meter {inst.name} must have at least one action "
                               "with a read method call (p4c-bm2-ss)", self.st.dm_tables[inst.name])
        for inst, n in self.st.dm_reads:
            if not inst.tables:
                raise self.st.err(f"direct_meter '{inst.name}' is read but attached to no table "
                               f"(meters = {inst.name.rsplit('.', 1)[-1]};)", n)
            if inst.read_ctx != self.st.dm_ctx[inst.name]:
                raise self.st.err(f"direct_meter.read() of {inst.name} outside the control of its table", n,
                               P4Unsupported)

    def check_parser_terminates(self, d: A.ParserDecl, states: dict[str, int]) -> None:
        """p4c rejects a parser from whose start state neither accept nor reject can be reached (every path
        loops forever). A select without a default may fail to match (NoMatch: reject), a missing transition
        is reject, so only chains of direct transitions and selects whose every case loops are caught."""
        succ: dict[str, set[str]] = {}
        for s in d.states:
            tr = s.transition
            if tr is None:
                succ[s.name] = {"reject"}
            elif isinstance(tr, str):
                succ[s.name] = {tr}
            else:
                nxt = {c.state for c in tr.cases}
                if not any(isinstance(c.keyset, A.KsDefault | A.KsDontCare) for c in tr.cases):
                    nxt.add("reject")
                succ[s.name] = nxt
        seen, todo = set(), ["start"]
        while todo:
            cur = todo.pop()
            if cur in seen:
                continue
            seen.add(cur)
            if cur in ("accept", "reject") or cur not in states:
                return      # an unknown state is reported where the transition names it
            todo.extend(succ.get(cur, ()))
        raise self.st.err(f"parser {d.name} never reaches accept or reject from its start state (every path loops)",
                       d)

    _CHECKSUM_CALLS = {"verify": ("verify_checksum", "verify_checksum_with_payload"),
                       "compute": ("update_checksum", "update_checksum_with_payload")}

    def check_checksum_control(self, decl: A.ControlDecl, role: str) -> None:
        """p4c-bm2-ss turns the VerifyChecksum/ComputeChecksum controls into BMv2 checksum objects
        (SimpleSwitchBackend::convertChecksum): their apply block may hold only blocks and calls of
        verify_checksum*/update_checksum* respectively, and the data list only field references,
        constants and lists ("Computations are not supported in ...")."""
        allowed = self._CHECKSUM_CALLS[role]

        def simple(e) -> bool:
            if isinstance(e, A.Name | A.IntLit | A.BoolLit):
                return True
            if isinstance(e, A.Member):
                return simple(e.expr)
            if isinstance(e, A.Index):
                return simple(e.expr) and isinstance(e.index, A.IntLit)
            if isinstance(e, A.ListExpr):
                return all(simple(x) for x in e.items)
            if isinstance(e, A.StructInit):
                return all(simple(v) for _, v in e.fields)
            return False

        def walk(st) -> None:
            if isinstance(st, A.Block):
                for x in st.stmts:
                    walk(x)
                return
            if isinstance(st, A.Empty | A.Return):
                return
            if isinstance(st, A.CallStmt) and isinstance(st.call.func, A.Name) and st.call.func.name in allowed:
                if len(st.call.args) > 1 and st.call.args[1].value is not None and not simple(st.call.args[1].value):
                    raise self.st.err(f"{st.call.func.name}: p4c-bm2-ss allows only field references and constants "
                                   f"in the data list (\"Computations are not supported\")", st.call.args[1].value)
                return
            if isinstance(st, A.Stmt):
                raise self.st.err(f"only calls to {allowed[0]} or {allowed[1]} are allowed in the {role} checksum "
                               f"control {decl.name} (p4c-bm2-ss turns it into BMv2 checksum objects)", st)

        walk(decl.body)
