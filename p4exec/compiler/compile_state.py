"""The compiler's shared state: scopes and symbols, types by name, the ProgramInfo being built, the Python
emitters, and the whole-program facts checked at the end. Every part of the compiler (see compile.py) holds one
CompileState and reads and writes it through typed attributes; the parts never reach each other through it."""
from __future__ import annotations

from typing import Any

from p4exec.compiler import controlplane, tir
from p4exec.compiler import types as T
from p4exec.compiler.emit import Emitter, pyident
from p4exec.compiler.nrecord import NativeRecord
from p4exec.compiler.symbols import Ctx, Sym, _loc
from p4exec.errors import P4TypeError, SourceLoc
from p4exec.frontend import ast as A


class CompileState:
    """What the parts of one compilation share: scopes, types, symbols, ProgramInfo, emitters, counters."""

    def __init__(self, program: A.Program, filename: str = "<input>") -> None:
        self.program = program
        self.filename = filename
        self.types: dict[str, Any] = {}           # name -> Type | ("extern", decl) | ("block", decl)
        self.globals: dict[str, Sym] = {}
        self.scopes: list[dict[str, Sym]] = []
        self.errors: list[str] = []
        self.match_kinds: list[str] = []
        self.info = controlplane.ProgramInfo()
        self.out = Emitter()            # module-level code
        self.classes: dict[int, str] = {}
        self.class_code = Emitter()
        self.tvars: list[dict[str, T.Type]] = []
        self.bind: list[tuple[str, str, str]] = []   # (python name, kind, runtime object name)
        self.py_names: set[str] = set()
        self.ctx: Ctx | None = None
        self.tmp_counter = 0
        self.field_lists: list[tuple] = []   # preserve functions
        self.field_list_by_index: dict[int, str] = {}
        self.blocks: dict[str, Any] = {}
        self.v1: dict[str, Any] = {}          # v1model's H, M, SM types (blocks.py)
        self.compiled_blocks: dict[str, str] = {}
        self.rand_used = False
        self.hash_algos: set[str] = set()
        self.obj_paths: set[str] = set()     # python paths of header/struct objects (stable per packet)
        self.specialized: dict[tuple, T.Type] = {}   # generic struct/header specialisations
        self.dead_code = 0        # > 0 while compiling a branch a constant condition rules out (statements.py)
        self.anonymous_digests: dict[int, str] = {}       # id(digest call) -> p4c's name digest_N (calls.py)
        self.odd_headers: list[tuple[Any, int]] = []     # (declaration, width) of headers BMv2 cannot hold (core.py)
        self.cp_names: dict[tuple[str, str], tuple[SourceLoc | None, Any]] = {}   # (kind, P4Info name) -> location (tables.py)
        self.native = NativeRecord()          # frames for the C generator (p4exec/native)
        self.pending_defs: list[tir.Stmt] = []   # helpers (tir.CallHelper) the statement being compiled needs
        self.stmt_depth = 0
        # p4c-bm2-ss rules checked across the whole program (methods.py, calls.py, blocks.py)
        self.pipeline_controls: list[tuple[A.ControlDecl, str]] = []   # ingress and egress, with their prefix
        self.dm_reads: list[tuple] = []             # (direct_meter instance, node) of its first read()
        self.dm_tables: dict[str, SourceLoc | None] = {}   # direct_meter -> declaration of the table it is attached to
        self.dm_ctx: dict[str, str] = {}            # direct_meter -> context arguments of its table's control
        self.pipeline_role: str | None = None       # V1Switch block being compiled (parser, ingress, ...)
        self.action_declaring: str | None = None    # action whose parameter types are being resolved
        self.entry: dict[str, str] = {}             # V1Switch role -> generated function name (blocks.py)

    @property
    def block_ctx(self) -> Ctx:
        """The context of the parser/control/action/function being compiled (statements only exist in one)."""
        if self.ctx is None:
            raise AssertionError("compiling a statement outside any block")
        return self.ctx

    def action_in_scope(self) -> str | None:
        """The P4Info name of the action being compiled (its parameters or body), None outside actions."""
        act = getattr(self.ctx, "action", None)
        return act.name if act is not None else self.action_declaring

    # ------------------------------------------------------------------ utilities
    def err(self, msg, node_or_loc, cls=P4TypeError):
        loc = node_or_loc if isinstance(node_or_loc, SourceLoc) or node_or_loc is None else _loc(node_or_loc)
        return cls(msg, loc)

    def unique(self, base: str) -> str:
        base = pyident(base)
        name = base
        i = 1
        while name in self.py_names:
            i += 1
            name = f"{base}_{i}"
        self.py_names.add(name)
        return name

    def tmp(self) -> str:
        self.tmp_counter += 1
        return f"_t{self.tmp_counter}"

    def push(self):
        self.scopes.append({})

    def pop(self):
        self.scopes.pop()

    def declare(self, name: str, sym: Sym, node) -> None:
        scope = self.scopes[-1] if self.scopes else self.globals
        if name in scope:
            prev = scope[name]
            # extern functions and methods may be overloaded; everything else is a duplicate
            if not (prev.kind == "extern_func" and sym.kind == "extern_func"):
                where = f" (previous declaration at {prev.loc})" if prev.loc else ""
                raise self.err(f"duplicate declaration of '{name}'{where}", node)
            prev.decl = prev.decl + sym.decl
            return
        sym.loc = sym.loc or _loc(node)
        scope[name] = sym

    def lookup(self, name: str, node, glob=False) -> Sym:
        if not glob:
            for scope in reversed(self.scopes):
                if name in scope:
                    return scope[name]
        if name in self.globals:
            return self.globals[name]
        raise self.err(f"unknown name '{name}'", node)

    def lookup_opt(self, name: str):
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return self.globals.get(name)

