"""Compile a P4 program for a target: P4Info + the device config that SetForwardingPipelineConfig carries.

p4exec's compiler and p4c-bm2-ss take the same command-line shape, so both are run as subprocesses the same
way; outputs are cached by source mtime in the build directory.

p4c picks the P4Info format from the file suffix of `--p4runtime-files` (`.txt` text, `.json`, `.bin`; only
recent p4c releases also know `.txtpb`), so the BMv2 P4Info is written as `.p4info.txt` (to read) and
`.p4info.bin` (to load). p4c reports
problems as `file(line): [--Werror=kind] error: message` followed by the source line and a `^^^` marker;
they are rewritten to the `file:line:col: error: message` form every other ethlab error uses.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from p4.config.v1 import p4info_pb2

from controller.p4info_index import load_p4info

REPO = Path(__file__).resolve().parents[1]
DEFAULT_PROGRAM = REPO / "p4src" / "ethplus.p4"


@dataclass
class PipelineArtifacts:
    program: Path
    target: str
    p4info: p4info_pb2.P4Info
    device_config: bytes
    p4info_path: Path
    config_path: Path


def _tool(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path=os.path.dirname(sys.executable))
    if found is None:
        raise FileNotFoundError(f"{name} not found (run 'make setup'; for bmv2 see 'ethlab doctor')")
    return found


_P4C_DIAG = re.compile(r"^\s*(?P<file>\S.*?)\((?P<line>\d+)\):\s*(?:\[--W[\w-]+=[\w-]+\]\s*)?"
                       r"(?:(?P<kind>error|warning|fatal error):\s*(?P<msg>.*)|(?P<syntax>syntax error.*))$")


def p4c_diagnostics(text: str) -> str:
    """p4c's `file(line): [--Werror=x] error: msg` + source line + `^^^` → `file:line:col: error: msg`
    (the column is where the marker starts, 1 without one); every other line is kept as it is."""
    lines = text.splitlines()
    out: list[str] = []
    for i, line in enumerate(lines):
        m = _P4C_DIAG.match(line)
        if m is None:
            out.append(line)
            continue
        col = 1
        for follow in lines[i + 1:i + 3]:
            if follow.strip() and set(follow.strip()) == {"^"}:
                col = follow.index("^") + 1
                break
        kind, msg = (m["kind"], m["msg"]) if m["kind"] else ("error", m["syntax"])
        out.append(f"{m['file']}:{m['line']}:{col}: {kind}: {msg}")
    return "\n".join(out)


@dataclass(frozen=True)
class Toolchain:
    """How one target's compiler runs and what it leaves: the compile half of a Target (controller/targets.py)."""

    target: str
    p4info_suffix: str  # of the readable P4Info copy
    load_binary: bool  # load the `.bin` P4Info copy (p4c writes both)
    command: Callable[[Path, Path, Path], list[str]]  # (program, device config, P4Info) -> argv
    inputs: Callable[[], list[Path]]  # compiler files whose change makes cached outputs stale
    diagnostics: Callable[[str], str] = str  # the compiler's report in ethlab's file:line:col form

    def p4info_path(self, build_dir: Path, stem: str) -> Path:
        return build_dir / f"{stem}.{self.target}.{self.p4info_suffix}"


def _p4exec_command(program: Path, config: Path, p4info: Path) -> list[str]:
    return [_tool("p4exec"), "compile", str(program), "-o", str(config), "--p4runtime-files", str(p4info)]


def _p4exec_inputs() -> list[Path]:
    """The compiler and the headers it puts into the output (p4exec's compiled JSON carries the preprocessed
    program, v1model.p4 included)."""
    root = REPO / "p4exec"
    return [*root.glob("include/*.p4"), *root.glob("frontend/*.py"), *root.glob("compiler/*.py")]


def _p4c_command(program: Path, config: Path, p4info: Path) -> list[str]:
    # The binary copy is what is loaded: a P4Info field newer than our p4runtime package survives it
    # (kept as an unknown field and sent on to PI as it is); text parsing would refuse it.
    return [_tool("p4c-bm2-ss"), "--arch", "v1model", "--std", "p4-16", "-o", str(config),
            "--p4runtime-files", f"{p4info},{p4info.with_suffix('.bin')}", str(program)]


def _p4c_inputs() -> list[Path]:
    found = shutil.which("p4c-bm2-ss")
    return [Path(found)] if found else []


P4EXEC_TOOLCHAIN = Toolchain("p4exec", "p4info.txtpb", False, _p4exec_command, _p4exec_inputs)
P4C_BMV2_TOOLCHAIN = Toolchain("bmv2", "p4info.txt", True, _p4c_command, _p4c_inputs, p4c_diagnostics)
TOOLCHAINS = {t.target: t for t in (P4EXEC_TOOLCHAIN, P4C_BMV2_TOOLCHAIN)}


def build_artifacts(program: Path = DEFAULT_PROGRAM, target: str | Toolchain = "p4exec",
                    build_dir: Path = REPO / "build" / "p4") -> PipelineArtifacts:
    """Compile (or take the cached outputs, when newer than every input) and load P4Info + device config."""
    if isinstance(target, str):
        if target not in TOOLCHAINS:
            raise ValueError(f"unknown target {target!r} ({' or '.join(TOOLCHAINS)})")
        target = TOOLCHAINS[target]
    tc = target
    program = Path(program).resolve()
    build_dir.mkdir(parents=True, exist_ok=True)
    stem = program.stem
    config = build_dir / f"{stem}.{tc.target}.json"
    p4info = tc.p4info_path(build_dir, stem)
    # programs beside it too: ethplus_inc.p4 is ethplus.p4 with aggregation included
    sources = [program, *program.parent.glob("*.p4"), *program.parent.glob("include/*.p4"), *tc.inputs()]
    newest = max(p.stat().st_mtime for p in sources if p.exists())
    load_from = p4info.with_suffix(".bin") if tc.load_binary else p4info
    outputs = [config, p4info, load_from]
    fresh = all(p.exists() for p in outputs) and min(p.stat().st_mtime for p in outputs) > newest
    if not fresh:
        done = subprocess.run(tc.command(program, config, p4info), capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            raise RuntimeError(f"compiling {program} for {tc.target} failed:\n"
                               f"{tc.diagnostics(done.stderr or done.stdout)}")
    return PipelineArtifacts(program, tc.target, load_p4info(load_from), config.read_bytes(), p4info, config)
