"""A small C-style preprocessor for P4 source.

Supports ``#include "file"`` (relative to the including file, then the include path) and ``#include <core.p4>`` /
``<v1model.p4>`` (from p4exec/include), object-like ``#define``/``#undef``, ``#ifdef/#ifndef/#if/#elif/#else/#endif``
(``#if`` takes integer expressions over macros and ``defined(X)``), ``#error``; ``#pragma``/``#line``/``#warning``
are ignored. The output is one text whose lines map back to (file, line) of the original sources, so errors point
at the file the user wrote.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from p4exec.errors import P4Error, SourceLoc

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DIRECTIVE = re.compile(r"^\s*#\s*([A-Za-z_]+)\s*(.*)$")
_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|//.*|/\*|[A-Za-z_][A-Za-z0-9_]*|.', re.S)

SYSTEM_INCLUDES = ("core.p4", "v1model.p4")
_INCLUDE_DIR = Path(__file__).resolve().parent.parent / "include"


def system_include_text(name: str) -> str | None:
    if name not in SYSTEM_INCLUDES:
        return None
    return (_INCLUDE_DIR / name).read_text()


@dataclass
class Preprocessed:
    text: str
    linemap: list[tuple[str, int]] = field(default_factory=list)  # output line i (0-based) -> (file, line)

    def loc(self, line: int, col: int) -> SourceLoc:
        """Map a 1-based (line, col) of ``text`` to the original file."""
        if 1 <= line <= len(self.linemap):
            f, ln = self.linemap[line - 1]
            return SourceLoc(f, ln, col)
        if self.linemap:
            f, ln = self.linemap[-1]
            return SourceLoc(f, ln + 1, col)
        return SourceLoc("<input>", line, col)


class _Cond:
    __slots__ = ("active", "taken", "parent_active", "seen_else", "line")

    def __init__(self, parent_active: bool, active: bool, line: int = 0):
        self.line = line
        self.parent_active = parent_active
        self.active = parent_active and active
        self.taken = active
        self.seen_else = False


class Preprocessor:
    def __init__(self, include_dirs: list[str] | None = None, defines: dict[str, str] | None = None):
        self.include_dirs = list(include_dirs or [])
        self.macros: dict[str, str] = {"__p4exec__": "1", "__TARGET_P4EXEC__": "1"}
        if defines:
            self.macros.update(defines)
        self.out_lines: list[str] = []
        self.linemap: list[tuple[str, int]] = []
        self.depth = 0

    # -- public -----------------------------------------------------------------------------------
    def run(self, text: str, filename: str) -> Preprocessed:
        self._process(text, filename, os.path.dirname(os.path.abspath(filename)) if filename else ".")
        return Preprocessed("\n".join(self.out_lines) + "\n", self.linemap)

    # -- internals --------------------------------------------------------------------------------
    def _emit(self, line: str, file: str, ln: int) -> None:
        self.out_lines.append(line)
        self.linemap.append((file, ln))

    def _process(self, text: str, filename: str, base_dir: str) -> None:
        self.depth += 1
        if self.depth > 50:
            raise P4Error("#include nested too deeply (recursive include?)", SourceLoc(filename, 1, 1))
        lines = text.split("\n")
        # join backslash-continued lines (keeping the line count: continuation lines become empty)
        joined: list[tuple[str, int, int]] = []  # (text, first line number, number of physical lines)
        i = 0
        while i < len(lines):
            start = i
            cur = lines[i].rstrip("\r")
            while cur.endswith("\\") and i + 1 < len(lines):
                i += 1
                cur = cur[:-1] + lines[i].rstrip("\r")
            joined.append((cur, start + 1, i - start + 1))
            i += 1
        conds: list[_Cond] = []
        in_comment = False
        for line, ln, nphys in joined:
            active = conds[-1].active if conds else True
            m = None if in_comment else _DIRECTIVE.match(line)
            if m:
                self._directive(m.group(1), m.group(2), conds, filename, base_dir, ln, line)
                for k in range(nphys):
                    self._emit("", filename, ln + k)
                continue
            if not active:
                for k in range(nphys):
                    self._emit("", filename, ln + k)
                continue
            out, in_comment = self._expand_line(line, in_comment, SourceLoc(filename, ln, 1))
            self._emit(out, filename, ln)
            for k in range(1, nphys):
                self._emit("", filename, ln + k)
        if conds:
            raise P4Error("unterminated #if/#ifdef/#ifndef (no #endif)", SourceLoc(filename, conds[-1].line, 1))
        self.depth -= 1

    def _directive(self, name: str, rest: str, conds: list[_Cond], filename: str, base_dir: str, ln: int,
                   line: str) -> None:
        loc = SourceLoc(filename, ln, line.find("#") + 1)
        rest = _strip_comments(rest).strip()
        active = conds[-1].active if conds else True
        if name in ("ifdef", "ifndef"):
            m = _IDENT.match(rest)
            if not m:
                raise P4Error(f"#{name} needs a macro name", loc)
            defined = m.group(0) in self.macros
            conds.append(_Cond(active, defined if name == "ifdef" else not defined, ln))
            return
        if name == "if":
            conds.append(_Cond(active, self._eval_if(rest, loc) if active else False, ln))
            return
        if name == "elif":
            if not conds or conds[-1].seen_else:
                raise P4Error("#elif without #if", loc)
            c = conds[-1]
            if c.taken:
                c.active = False
            else:
                val = self._eval_if(rest, loc) if c.parent_active else False
                c.active = c.parent_active and val
                c.taken = val
            return
        if name == "else":
            if not conds or conds[-1].seen_else:
                raise P4Error("#else without #if", loc)
            c = conds[-1]
            c.seen_else = True
            c.active = c.parent_active and not c.taken
            c.taken = True
            return
        if name == "endif":
            if not conds:
                raise P4Error("#endif without #if", loc)
            conds.pop()
            return
        if not active:
            return
        if name == "define":
            m = re.match(r"([A-Za-z_][A-Za-z0-9_]*)(\(?)", rest)
            if not m:
                raise P4Error("#define needs a macro name", loc)
            if m.group(2):
                raise P4Error("unsupported: function-like macros (#define NAME(...))", loc)
            self.macros[m.group(1)] = rest[m.end():].strip()
            return
        if name == "undef":
            m = _IDENT.match(rest)
            if not m:
                raise P4Error("#undef needs a macro name", loc)
            self.macros.pop(m.group(0), None)
            return
        if name == "include":
            self._include(rest, filename, base_dir, loc)
            return
        if name == "error":
            raise P4Error(f"#error {rest}", loc)
        if name in ("pragma", "line", "warning"):
            return
        raise P4Error(f"unknown preprocessor directive #{name}", loc)

    def _include(self, rest: str, filename: str, base_dir: str, loc: SourceLoc) -> None:
        m = re.match(r'"([^"]+)"|<([^>]+)>', rest)
        if not m:
            raise P4Error('#include expects "file" or <file>', loc)
        if m.group(2) is not None:
            name = m.group(2)
            text = system_include_text(name)
            if text is not None:
                self._process(text, f"<{name}>", base_dir)
                return
            for d in self.include_dirs:
                p = os.path.join(d, name)
                if os.path.isfile(p):
                    self._include_file(p, loc)
                    return
            if name in ("psa.p4", "pna.p4", "tna.p4", "t2na.p4", "ebpf_model.p4", "ubpf_model.p4"):
                raise P4Error(f"unsupported: architecture <{name}> (p4exec implements v1model only)", loc)
            raise P4Error(f"cannot find include file <{name}>", loc)
        name = m.group(1)
        for d in [base_dir, *self.include_dirs]:
            p = os.path.join(d, name)
            if os.path.isfile(p):
                self._include_file(p, loc)
                return
        text = system_include_text(name)
        if text is not None:
            self._process(text, f"<{name}>", base_dir)
            return
        raise P4Error(f'cannot find include file "{name}"', loc)

    def _include_file(self, path: str, loc: SourceLoc) -> None:
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError) as e:
            raise P4Error(f"cannot read include file {path}: {e}", loc) from None
        self._process(text, _display_path(path), os.path.dirname(os.path.abspath(path)))

    def _expand_line(self, line: str, in_comment: bool, loc: SourceLoc) -> tuple[str, bool]:
        """Replace macros outside strings and comments; track block comments across lines."""
        out: list[str] = []
        pos = 0
        n = len(line)
        while pos < n:
            if in_comment:
                end = line.find("*/", pos)
                if end < 0:
                    out.append(line[pos:])
                    return "".join(out), True
                out.append(line[pos:end + 2])
                pos = end + 2
                in_comment = False
                continue
            m = _TOKEN.match(line, pos)
            tok = m.group(0)
            if tok == "/*":
                in_comment = True
                out.append(tok)
                pos = m.end()
                continue
            if tok.startswith("//") or tok.startswith('"'):
                out.append(tok)
                pos = m.end()
                continue
            if tok in self.macros and (tok[0].isalpha() or tok[0] == "_"):
                out.append(self._expand_macro(tok, loc, set()))
            else:
                out.append(tok)
            pos = m.end()
        return "".join(out), in_comment

    def _expand_macro(self, name: str, loc: SourceLoc, seen: set[str]) -> str:
        if name in seen:
            return name
        body = self.macros[name]
        seen = seen | {name}
        return _IDENT.sub(lambda m: self._expand_macro(m.group(0), loc, seen) if m.group(0) in self.macros
                          else m.group(0), body)

    def _eval_if(self, expr: str, loc: SourceLoc) -> bool:
        expr = re.sub(r"defined\s*\(\s*([A-Za-z_]\w*)\s*\)|defined\s+([A-Za-z_]\w*)",
                      lambda m: "1" if (m.group(1) or m.group(2)) in self.macros else "0", expr)
        expr = _IDENT.sub(lambda m: self._expand_macro(m.group(0), loc, set()) if m.group(0) in self.macros
                          else m.group(0), expr)
        expr = _IDENT.sub(lambda m: m.group(0) if m.group(0) in ("and", "or", "not") else "0", expr)
        expr = expr.replace("&&", " and ").replace("||", " or ")
        expr = re.sub(r"!(?!=)", " not ", expr)
        if not re.fullmatch(r"[\s0-9a-fA-FxX()+\-*/%<>=!&|^~andortn]*", expr):
            raise P4Error("cannot evaluate #if expression", loc)
        try:
            return bool(eval(expr, {"__builtins__": {}}, {}))  # noqa: S307 - restricted to digits/operators
        except Exception:
            raise P4Error("cannot evaluate #if expression", loc) from None


def _strip_comments(s: str) -> str:
    s = re.sub(r"/\*.*?\*/", " ", s)
    i = s.find("//")
    return s if i < 0 else s[:i]


def _display_path(path: str) -> str:
    try:
        rel = os.path.relpath(path)
        return rel if not rel.startswith("..") else path
    except ValueError:
        return path


def preprocess(text: str, filename: str = "<input>", include_dirs: list[str] | None = None,
               defines: dict[str, str] | None = None) -> Preprocessed:
    return Preprocessor(include_dirs, defines).run(text, filename)


def preprocess_file(path: str, include_dirs: list[str] | None = None,
                    defines: dict[str, str] | None = None) -> Preprocessed:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise P4Error(f"cannot read {path}: {e}", SourceLoc(path, 0, 0)) from None
    return preprocess(text, _display_path(path), include_dirs, defines)
