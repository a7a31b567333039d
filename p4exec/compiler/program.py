"""Compiled programs: P4 source -> checked program + Python code + P4Info.

Nothing here knows the runtime or v1model: `p4exec.v1model.loader` turns a CompiledProgram into a
LoadedProgram (runtime state + pipeline), as often as needed.
"""
from __future__ import annotations

import hashlib
import json
import threading

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

    # ------------------------------------------------------------------ compiled form (OUT.json)
    def to_json(self) -> str:
        from google.protobuf import text_format

        return json.dumps({"format": "p4exec-compiled-1", "filename": self.filename, "program": self.text,
                           "linemap": self.pre.linemap,
                           "p4info": text_format.MessageToString(self.p4info)}, indent=1)


_cache: dict[str, CompiledProgram] = {}
_lock = threading.Lock()


def _compile_pre(pre: Preprocessed, filename: str) -> CompiledProgram:
    key = hashlib.sha256(pre.text.encode() + repr(pre.linemap).encode()).hexdigest()
    with _lock:
        hit = _cache.get(key)
    if hit is not None:
        return hit
    try:
        ast = parse_preprocessed(pre)
        c = Compiler(ast, filename)
        c.run()
        src = c.module_source()
        prog = CompiledProgram(pre, c.info, src, filename, c.types_lines)
    except P4Error:
        raise
    except RecursionError:
        raise P4Error("program nesting too deep", SourceLoc(filename, 1, 1)) from None
    except Exception as e:  # noqa: BLE001 - a compiler bug must still come out as a located error
        loc = getattr(getattr(c, "ctx", None), "control", None) if "c" in locals() else None
        where = getattr(loc, "loc", None) or SourceLoc(filename, 1, 1)
        raise P4Error(f"internal compiler error ({type(e).__name__}: {e}); please report this program",
                      where) from None
    prog.bindings = list(c.bind)
    with _lock:
        _cache[key] = prog
    return prog


def compile_source(text: str, filename: str = "<input>", include_dirs: list[str] | None = None) -> CompiledProgram:
    return _compile_pre(preprocess(text, filename, include_dirs), filename)


def compile_file(path: str, include_dirs: list[str] | None = None) -> CompiledProgram:
    pre = preprocess_file(path, include_dirs)
    return _compile_pre(pre, path)


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
        except ValueError:
            obj = None
        if isinstance(obj, dict) and "program" in obj:
            fname = obj.get("filename") or "<device_config>"
            lm = [tuple(x) for x in obj.get("linemap") or []]
            pre = Preprocessed(obj["program"], lm or [(fname, i + 1) for i in range(obj["program"].count("\n") + 1)])
            return _compile_pre(pre, fname)
    return compile_source(text, "<device_config>")
