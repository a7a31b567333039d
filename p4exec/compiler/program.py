"""Compiled programs: P4 source -> checked program + Python code + P4Info.

Nothing here knows the runtime or v1model: `p4exec.v1model.loader` turns a CompiledProgram into a
LoadedProgram (runtime state + pipeline), as often as needed.
"""
from __future__ import annotations

import hashlib
import json
import threading
from typing import Any

from p4exec.compiler import controlplane
from p4exec.compiler.compile import Compiler
from p4exec.compiler.p4info import build_p4info
from p4exec.errors import P4Error, SourceLoc
from p4exec.frontend.parser import parse_preprocessed
from p4exec.frontend.preprocess import Preprocessed, preprocess, preprocess_file


class CompiledProgram:
    """One checked P4 program: its control-plane description, P4Info and generated Python code."""

    def __init__(self, pre: Preprocessed, info: controlplane.ProgramInfo, pysource: str, filename: str, types_lines: int = 0):
        self.pre = pre
        self.text = pre.text
        self.filename = filename
        self.info = info
        self.pysource = pysource
        # Two code objects with the line numbers of `pysource`: the prelude and classes (`types_code`, which a
        # loader may run once for all instances) and the rest (`code`: controls, parsers, tables' actions).
        self.types_lines = types_lines
        lines = pysource.split("\n")
        where = f"<p4exec:{filename}>"
        self.types_code = compile("\n".join(lines[:types_lines]), where, "exec")
        self.code = compile("\n" * types_lines + "\n".join(lines[types_lines:]), where, "exec")
        self.p4info = build_p4info(info)
        self.bindings: list[tuple[str, str, str]] = []  # (generated name, runtime kind, object name)
        self.native: Any = None
        self.native_v1: dict[str, Any] = {}
        self.native_entry: dict[str, str] = {}
        self.native_field_lists: list[tuple] = []

    # ------------------------------------------------------------------ compiled form (OUT.json)
    def to_json(self) -> str:
        from google.protobuf import text_format

        return json.dumps({"format": "p4exec-compiled-1", "filename": self.filename, "program": self.text,
                           "linemap": self.pre.linemap,
                           "p4info": text_format.MessageToString(self.p4info)}, indent=1)


_cache: dict[str, CompiledProgram] = {}
_lock = threading.Lock()
# One lock per program being compiled: a controller pushes one program to many switches from a thread pool (8
# threads), and each in-process switch asked for it at once. Without it every thread missed the cache and
# compiled the same program (UPN 512: 4 compiles, most of the 2.8 s pipeline push).
_compiling: dict[str, threading.Lock] = {}


def _compile_pre(pre: Preprocessed, filename: str) -> CompiledProgram:
    key = hashlib.sha256(pre.text.encode() + repr(pre.linemap).encode()).hexdigest()
    with _lock:
        hit = _cache.get(key)
        if hit is not None:
            return hit
        gate = _compiling.setdefault(key, threading.Lock())
    with gate:  # the first thread compiles; the others wait for its result instead of compiling again
        with _lock:
            hit = _cache.get(key)
        if hit is not None:
            return hit
        try:
            return _compile_new(pre, filename, key)
        finally:
            with _lock:
                _compiling.pop(key, None)


def _compile_new(pre: Preprocessed, filename: str, key: str) -> CompiledProgram:
    try:
        ast = parse_preprocessed(pre)
        c = Compiler(ast, filename)
        c.run()
        src = c.module_source()
        prog = CompiledProgram(pre, c.info, src, filename, c.types_lines)
    except P4Error:
        raise
    except RecursionError:
        loc = getattr(getattr(c, "ctx", None), "control", None) if "c" in locals() else None
        raise P4Error("nesting too deep", getattr(loc, "loc", None) or SourceLoc(filename, 1, 1)) from None
    except Exception as e:  # noqa: BLE001 - a compiler bug must still come out as a located error
        loc = getattr(getattr(c, "ctx", None), "control", None) if "c" in locals() else None
        where = getattr(loc, "loc", None) or SourceLoc(filename, 1, 1)
        raise P4Error(f"internal compiler error ({type(e).__name__}: {e}); please report this program",
                      where) from None
    prog.bindings = list(c.bind)
    prog.native = c.st.native          # frames and IR for the C generator (p4exec/native)
    prog.native_v1 = dict(c.st.v1)
    prog.native_entry = dict(c.st.entry)
    prog.native_field_lists = list(c.st.field_lists)
    with _lock:
        _cache[key] = prog
    return prog


def compile_source(text: str, filename: str = "<input>", include_dirs: list[str] | None = None) -> CompiledProgram:
    return _compile_pre(preprocess(text, filename, include_dirs), filename)


def compile_file(path: str, include_dirs: list[str] | None = None) -> CompiledProgram:
    pre = preprocess_file(path, include_dirs)
    return _compile_pre(pre, path)


def _compiled_form(obj: dict) -> tuple[Preprocessed, str]:
    """`p4exec compile`'s JSON checked field by field: a wrong type is an error saying which, never a crash."""
    where = SourceLoc("<device_config>", 0, 0)
    program, fname, linemap = obj["program"], obj.get("filename") or "<device_config>", obj.get("linemap") or []
    if not isinstance(program, str) or not isinstance(fname, str):
        raise P4Error("compiled config: 'program' and 'filename' must be strings", where)
    if not isinstance(linemap, list) or not all(
            isinstance(x, list) and len(x) == 2 and isinstance(x[0], str) and isinstance(x[1], int)
            and not isinstance(x[1], bool) and x[1] >= 0 for x in linemap):
        raise P4Error("compiled config: 'linemap' must be a list of [file, line] pairs", where)
    lm = [(f, line) for f, line in linemap]
    return Preprocessed(program, lm or [(fname, i + 1) for i in range(program.count("\n") + 1)]), fname


def load_compiled(data: bytes | str) -> CompiledProgram:
    """Load `p4exec compile`'s JSON or plain P4 source."""
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise P4Error("device config is neither UTF-8 P4 source nor p4exec JSON",
                          SourceLoc("<device_config>", 0, 0)) from None
    else:
        text = data
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            obj = json.loads(text)
        except (ValueError, RecursionError):
            obj = None
        if isinstance(obj, dict) and "program" in obj:
            return _compile_pre(*_compiled_form(obj))
    return compile_source(text, "<device_config>")
