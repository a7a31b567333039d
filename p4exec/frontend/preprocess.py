"""Preprocessing as p4c does it: the C preprocessor (``cpp -E -undef -nostdinc``), run bounded.

p4c hands every program to cpp before parsing, so function-like macros, ``#``/``##``, variadic macros,
``#if`` arithmetic with C's rules, ``defined()`` and ``#line`` must behave exactly as cpp's; running cpp
itself is the only way to be sure.  cpp runs as a subprocess with CPU, address-space, output-size and
wall-clock limits, so ``#if 9**9**9`` or a macro bomb ends in one located error instead of a frozen switch.

The result keeps the frontend's contract: one text without line markers plus ``linemap`` (output line ->
(file, line)), built from cpp's ``# N "file"`` markers.  cpp collapses runs of blanks between tokens; to keep
columns pointing into the user's file, each output line is re-spaced so that tokens it shares with the source
line start at their source column (macro expansions keep cpp's spacing).

``untrusted=True`` is for source received from the network (``p4exec.compiler.worker``): only the standard
headers may be included, checked on the text before cpp runs and again on cpp's line markers, and no error
names a file or echoes its contents.
"""
from __future__ import annotations

import difflib
import os
import re
import resource
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from p4exec.errors import P4Error, SourceLoc
from p4exec.textfile import read_text_file

SYSTEM_INCLUDES = ("core.p4", "v1model.p4")
INCLUDE_DIR = Path(__file__).resolve().parent.parent / "include"
_UNSUPPORTED_ARCHS = ("psa.p4", "pna.p4", "tna.p4", "t2na.p4", "ebpf_model.p4", "ubpf_model.p4", "xdp_model.p4")
PREDEFINED = {"__p4exec__": "1", "__TARGET_P4EXEC__": "1"}
# cpp's operators that look at the filesystem, shadowed by macros of the same name for received source: a macro
# defined on the command line replaces the built-in operator for the whole run, so however the source spells or
# pastes the name (`a##b`, `#undef`), `__has_include(...)` is 0 (after `#undef` a plain identifier) and
# `_Pragma("GCC dependency ...")` is nothing — the preprocessor itself can no longer ask about a path.
SHADOWED = ["-D__has_include(x)=0", "-D__has_include_next(x)=0", "-D_Pragma(x)="]


@dataclass(frozen=True)
class CppLimits:
    """What one preprocessor run may cost (a well-formed program needs a small fraction of each)."""
    cpu_s: int = 20
    memory_bytes: int = 1 << 30
    wall_s: float = 60.0
    input_bytes: int = 32 << 20
    output_bytes: int = 128 << 20


DEFAULT_LIMITS = CppLimits()


def system_include_text(name: str) -> str | None:
    if name not in SYSTEM_INCLUDES:
        return None
    return (INCLUDE_DIR / name).read_text()


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


# ---------------------------------------------------------------------------------------------- checks
_DIRECTIVE_LINE = re.compile(r"^[ \t]*#[ \t]*([A-Za-z_]\w*)?(.*)$")
_STD_INCLUDE = re.compile(r'^\s*(?:<(core\.p4|v1model\.p4)>|"(core\.p4|v1model\.p4)")\s*$')
_ALLOWED_UNTRUSTED = {"define", "undef", "if", "ifdef", "ifndef", "elif", "else", "endif", "error", "warning",
                      "line", "pragma", "include"}
_ONLY_STD = "only <core.p4> and <v1model.p4> may be included in a program sent to the switch"


def check_untrusted(text: str, filename: str) -> None:
    """Reject, before cpp sees it, anything that could make cpp look at the filesystem.

    Runs on the comment-blanked, continuation-joined text, so a directive hidden by a line continuation or a
    comment is still seen.  Identifiers that query files (``__has_include``) are refused anywhere, since a
    macro can paste them together inside ``#if``; cpp additionally runs in an empty directory as ``nobody``.
    """
    lines = _blank_comments(text)
    i = 0
    while i < len(lines):
        start = i
        line = lines[i]
        while line.endswith("\\") and i + 1 < len(lines):
            i += 1
            line = line[:-1] + lines[i]
        i += 1
        loc = SourceLoc(filename, start + 1, 1)
        if "__has_include" in line or "has_include" in line:
            raise P4Error("unsupported in a program sent to the switch: __has_include", loc)
        m = _DIRECTIVE_LINE.match(line)
        if not m or m.group(1) is None:
            continue
        name, rest = m.group(1), m.group(2)
        loc = SourceLoc(filename, start + 1, line.find("#") + 1)
        if name not in _ALLOWED_UNTRUSTED:
            raise P4Error(f"unsupported in a program sent to the switch: #{name}", loc)
        if name == "include" and not _STD_INCLUDE.match(rest):
            raise P4Error(_ONLY_STD, loc)
        if name == "pragma" and re.search(r"\bdependency\b", rest):
            raise P4Error("unsupported in a program sent to the switch: #pragma GCC dependency", loc)


# ---------------------------------------------------------------------------------------------- running cpp
def _cpp_binary() -> str:
    found = shutil.which("cpp") or ("/usr/bin/cpp" if os.path.exists("/usr/bin/cpp") else None)
    if found is None:
        raise P4Error("the C preprocessor `cpp` is not installed (Debian package cpp; `make setup` installs it)",
                      SourceLoc("<input>", 0, 0))
    return found


def capped(which: int, value: int) -> int:
    """``value``, or the lower hard limit this process already has (children inherit it and cannot raise it)."""
    _, hard = resource.getrlimit(which)
    return hard if hard != resource.RLIM_INFINITY and hard < value else value


def bounded(argv: list[str], cpu_s: int, memory_bytes: int, output_bytes: int,
            run_as: tuple[int, int] | None = None) -> list[str]:
    """``argv`` run under CPU/address-space/file-size limits (and as ``run_as``), set by exec'd helpers
    (util-linux prlimit, setpriv) rather than a preexec_fn: a fork of a multi-threaded gRPC server must
    run no Python before exec (it crashed with SIGSEGV there)."""
    limits = [f"--cpu={capped(resource.RLIMIT_CPU, cpu_s)}",
              f"--as={capped(resource.RLIMIT_AS, memory_bytes)}",
              f"--fsize={capped(resource.RLIMIT_FSIZE, output_bytes)}", "--core=0"]
    user = [] if run_as is None else ["setpriv", f"--reuid={run_as[0]}", f"--regid={run_as[1]}",
                                      "--clear-groups", "--"]
    return ["prlimit", *limits, "--", *user, *argv]


def _run_cpp(text: str, display: str, args: list[str], cwd: str, limits: CppLimits,
             run_as: tuple[int, int] | None = None) -> tuple[int, str, str]:
    """Run cpp on ``text`` (presented to it as file ``display``); return (status, stdout, stderr)."""
    src = f'# 1 "{_quote(display)}"\n{text}'
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            argv = bounded([_cpp_binary(), *args, "-"], limits.cpu_s, limits.memory_bytes, limits.output_bytes,
                           run_as)
            proc = subprocess.run(argv, input=src.encode("utf-8", "surrogateescape"),
                                  stdout=out, stderr=err, cwd=cwd, timeout=limits.wall_s,
                                  env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"})
            status = proc.returncode
        except subprocess.TimeoutExpired:
            status = -1000
        out.seek(0)
        err.seek(0)
        return status, out.read().decode("utf-8", "replace"), err.read(64 << 10).decode("utf-8", "replace")


def _quote(name: str) -> str:
    return name.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


_MARKER = re.compile(r'^# (\d+) "((?:\\.|[^"\\])*)"(.*)$')
_DIAG = re.compile(r"^(?P<file>.*?):(?P<line>\d+):(?P<col>\d+): (?P<kind>fatal error|error): (?P<msg>.*)$")
_MISSING = re.compile(r"^(?P<name>.*): (No such file or directory|Permission denied|Is a directory|.*)$")


class _Namer:
    """Turns the paths cpp prints into the names errors show: ``<core.p4>`` for the standard headers, the
    path relative to the working directory (as before) for the user's files."""

    def __init__(self, cwd: str, include_dir: str):
        self.cwd = cwd
        self.include_dir = os.path.normpath(include_dir)

    def real(self, name: str) -> str:
        return name if os.path.isabs(name) or name.startswith("<") else os.path.join(self.cwd, name)

    def display(self, name: str, main_display: str) -> str:
        if name == main_display or name.startswith("<"):
            return name
        real = os.path.normpath(self.real(name))
        if os.path.dirname(real) == self.include_dir:
            return f"<{os.path.basename(real)}>"
        return _display_path(real)


def _error_from_stderr(stderr: str, status: int, filename: str, namer: _Namer, untrusted: bool,
                       limits: CppLimits) -> P4Error:
    if status == -1000:
        return P4Error(f"preprocessing took longer than {limits.wall_s:g} s (stopped)", SourceLoc(filename, 1, 1))
    for line in stderr.splitlines():
        m = _DIAG.match(line)
        if m is None:
            continue
        file = m["file"] if m["file"] not in ("<stdin>", "-") else filename
        loc = SourceLoc(namer.display(file, filename), int(m["line"]), int(m["col"]))
        msg = m["msg"]
        if m["kind"] == "fatal error":
            missing = _MISSING.match(msg)
            name = missing["name"] if missing else ""
            if untrusted:
                return P4Error(_ONLY_STD, loc)
            if name in _UNSUPPORTED_ARCHS:
                return P4Error(f"unsupported: architecture <{name}> (p4exec implements v1model only)", loc)
            if missing and "No such file" in msg:
                return P4Error(f"cannot find include file {name}", loc)
        if untrusted and loc.file != filename:
            return P4Error(f"preprocessor: {msg}", SourceLoc(filename, 1, 1))
        return P4Error(msg if msg.startswith("#error") else f"preprocessor: {msg}", loc)
    if status < 0:
        return P4Error("preprocessing exceeded its CPU, memory or output limit (stopped)", SourceLoc(filename, 1, 1))
    first = next((ln for ln in stderr.splitlines() if ln.strip()), f"exit status {status}")
    return P4Error(f"preprocessor failed: {first if not untrusted else 'exit status ' + str(status)}",
                   SourceLoc(filename, 1, 1))


def preprocess(text: str, filename: str = "<input>", include_dirs: list[str] | None = None,
               defines: dict[str, str] | None = None, *, base_dir: str | None = None, untrusted: bool = False,
               limits: CppLimits = DEFAULT_LIMITS, include_dir: str | None = None,
               run_as: tuple[int, int] | None = None) -> Preprocessed:
    """Preprocess ``text`` (shown in errors as ``filename``).

    Quoted includes are searched in ``base_dir`` (default: the directory of ``filename``), then in
    ``include_dirs``, then in the standard include directory (``include_dir``, default p4exec/include), as
    cpp does for the including file.  ``untrusted``: see the module docstring; ``base_dir`` is then cpp's
    working directory (give an empty private one) and ``run_as`` (uid, gid) the user cpp runs as.
    """
    std_dir = include_dir or str(INCLUDE_DIR)
    if len(text) > limits.input_bytes:
        raise P4Error(f"program too large ({len(text)} bytes; at most {limits.input_bytes})",
                      SourceLoc(filename, 1, 1))
    if untrusted:
        check_untrusted(text, filename)
        cwd = base_dir or tempfile.gettempdir()
        search: list[str] = []
    else:
        cwd = os.path.abspath(base_dir or (os.path.dirname(os.path.abspath(filename)) if filename else "."))
        search = ["-iquote", cwd] + [a for d in include_dirs or [] for a in ("-I", os.path.abspath(d))]
    args = ["-E", "-undef", "-nostdinc", "-w", "-fdiagnostics-column-unit=byte", "-I", std_dir, *search]
    for name, value in {**PREDEFINED, **(defines or {})}.items():
        args.append(f"-D{name}={value}")
    if untrusted:
        args += SHADOWED
    status, out, err = _run_cpp(text, filename, args, cwd, limits, run_as)
    namer = _Namer(cwd, std_dir)
    if status != 0:
        raise _error_from_stderr(err, status, filename, namer, untrusted, limits)
    return _assemble(out, filename, text, namer, untrusted)


def preprocess_file(path: str, include_dirs: list[str] | None = None,
                    defines: dict[str, str] | None = None, *, limits: CppLimits = DEFAULT_LIMITS) -> Preprocessed:
    display = _display_path(path)
    text = read_text_file(path, limits.input_bytes, "program")
    return preprocess(text, display, include_dirs, defines, base_dir=os.path.dirname(os.path.abspath(path)),
                      limits=limits)


# ---------------------------------------------------------------------------------------------- output
def _assemble(out: str, filename: str, main_text: str, namer: _Namer, untrusted: bool) -> Preprocessed:
    """Drop cpp's line markers into a line map and restore source columns."""
    lines: list[str] = []
    linemap: list[tuple[str, int]] = []
    sources: dict[str, list[str] | None] = {filename: _blank_comments(main_text)}
    cur_file, cur_line = filename, 1
    skipping = True  # cpp's <built-in>/<command-line> preamble
    for raw in out.split("\n"):
        m = _MARKER.match(raw)
        if m:
            name = re.sub(r"\\(.)", r"\1", m.group(2))
            cur_line = int(m.group(1))
            if name in ("<stdin>", "<built-in>", "<command-line>"):
                skipping = True
                continue
            skipping = False
            cur_file = namer.display(name, filename)
            if untrusted and cur_file != filename and cur_file not in ("<core.p4>", "<v1model.p4>"):
                raise P4Error(_ONLY_STD, SourceLoc(filename, 1, 1))
            if cur_file not in sources:
                sources[cur_file] = _read_blanked(namer.real(name)) if not untrusted or cur_file.startswith("<") \
                    else None
            continue
        if skipping:
            continue
        src = sources.get(cur_file)
        orig = src[cur_line - 1] if src is not None and 0 < cur_line <= len(src) else None
        lines.append(_respace(raw, orig) if orig is not None and raw.strip() else raw)
        linemap.append((cur_file, cur_line))
        cur_line += 1
    while lines and not lines[-1].strip():  # cpp's trailing newline
        lines.pop()
        linemap.pop()
    return Preprocessed("\n".join(lines) + "\n", linemap)


def _read_blanked(path: str) -> list[str] | None:
    try:
        with open(path, encoding="utf-8") as f:
            return _blank_comments(f.read())
    except (OSError, UnicodeDecodeError):
        return None


_COMMENT_OR_STRING = re.compile(r'"(?:\\.|[^"\\\n])*"?|//[^\n]*|/\*.*?(?:\*/|\Z)', re.S)


def _blank_comments(text: str) -> list[str]:
    """The source's lines with comments replaced by blanks (line count and columns kept)."""
    def blank(m: re.Match[str]) -> str:
        tok = m.group(0)
        return tok if tok.startswith('"') else re.sub(r"[^\n\t]", " ", tok)
    return [ln.rstrip("\r") for ln in _COMMENT_OR_STRING.sub(blank, text).split("\n")]


_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"?|\w+|\S')
_MAX_RESPACE = 4000


def _respace(cpp_line: str, orig: str) -> str:
    """Place the tokens of ``cpp_line`` at their columns in the source line ``orig`` where they came from it.

    Only blanks are added, and only where cpp printed a blank or the source had one between the same two
    tokens, so the token sequence the parser sees is exactly cpp's.
    """
    if len(cpp_line) > _MAX_RESPACE or len(orig) > _MAX_RESPACE:
        return cpp_line
    out_toks = [(m.start(), m.group(0)) for m in _TOKEN.finditer(cpp_line)]
    src_toks = [(m.start(), m.group(0)) for m in _TOKEN.finditer(orig.expandtabs(1))]
    if [t for _, t in out_toks] == [t for _, t in src_toks]:
        return orig.expandtabs(1).rstrip()
    matcher = difflib.SequenceMatcher(None, [t for _, t in out_toks], [t for _, t in src_toks], autojunk=False)
    target: dict[int, int] = {}
    for a, b, size in matcher.get_matching_blocks():
        for k in range(size):
            target[a + k] = b + k
    pieces: list[str] = []
    pos = 0
    prev_end_cpp = 0
    for i, (col, tok) in enumerate(out_toks):
        gap = col - prev_end_cpp if i else col
        at = pos + gap
        j = target.get(i)
        if j is not None:
            src_col = src_toks[j][0]
            blank_in_source = i > 0 and target.get(i - 1) == j - 1 and \
                src_toks[j - 1][0] + len(src_toks[j - 1][1]) < src_col
            if src_col > at and (i == 0 or gap > 0 or blank_in_source):
                at = src_col
        pieces.append(" " * (at - pos) + tok)
        pos = at + len(tok)
        prev_end_cpp = col + len(tok)
    return "".join(pieces)


def _display_path(path: str) -> str:
    try:
        rel = os.path.relpath(path)
        return rel if not rel.startswith("..") else path
    except ValueError:
        return path
