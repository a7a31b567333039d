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
from dataclasses import dataclass
from pathlib import Path

from p4.config.v1 import p4info_pb2

from controller.p4info_index import load_p4info

REPO = Path(__file__).resolve().parents[1]
DEFAULT_PROGRAM = REPO / "p4src" / "ethplus.p4"
P4INFO_SUFFIX = {"p4exec": "p4info.txtpb", "bmv2": "p4info.txt"}


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


def compile_command(program: Path, target: str, config: Path, p4info: Path) -> list[str]:
    if target == "p4exec":
        return [_tool("p4exec"), "compile", str(program), "-o", str(config), "--p4runtime-files", str(p4info)]
    if target == "bmv2":
        # The binary copy is what is loaded: a P4Info field newer than our p4runtime package survives it
        # (kept as an unknown field and sent on to PI as it is); text parsing would refuse it.
        return [_tool("p4c-bm2-ss"), "--arch", "v1model", "--std", "p4-16", "-o", str(config),
                "--p4runtime-files", f"{p4info},{p4info.with_suffix('.bin')}", str(program)]
    raise ValueError(f"unknown target {target!r} (p4exec or bmv2)")


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


def _toolchain(target: str) -> list[Path]:
    """Files whose change makes cached outputs stale besides the program: the compiler and the headers it
    puts into the output (p4exec's compiled JSON carries the preprocessed program, v1model.p4 included)."""
    if target == "p4exec":
        root = REPO / "p4exec"
        return [*root.glob("include/*.p4"), *root.glob("frontend/*.py"), *root.glob("compiler/*.py")]
    found = shutil.which("p4c-bm2-ss")
    return [Path(found)] if found else []


def build_artifacts(program: Path = DEFAULT_PROGRAM, target: str = "p4exec",
                    build_dir: Path = REPO / "build" / "p4") -> PipelineArtifacts:
    program = Path(program).resolve()
    if target not in P4INFO_SUFFIX:
        raise ValueError(f"unknown target {target!r} (p4exec or bmv2)")
    build_dir.mkdir(parents=True, exist_ok=True)
    stem = program.stem
    config = build_dir / f"{stem}.{target}.json"
    p4info = build_dir / f"{stem}.{target}.{P4INFO_SUFFIX[target]}"
    sources = [program, *program.parent.glob("include/*.p4"), *_toolchain(target)]
    newest = max(p.stat().st_mtime for p in sources if p.exists())
    load_from = p4info.with_suffix(".bin") if target == "bmv2" else p4info
    outputs = [config, p4info, load_from]
    fresh = all(p.exists() for p in outputs) and min(p.stat().st_mtime for p in outputs) > newest
    if not fresh:
        cmd = compile_command(program, target, config, p4info)
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            report = done.stderr or done.stdout
            if target == "bmv2":
                report = p4c_diagnostics(report)
            raise RuntimeError(f"compiling {program} for {target} failed:\n{report}")
    return PipelineArtifacts(program, target, load_p4info(load_from), config.read_bytes(), p4info, config)
