"""Compile a P4 program for a target: P4Info + the device config that SetForwardingPipelineConfig carries.

p4sim's compiler and p4c-bm2-ss take the same command-line shape, so both are run as subprocesses the same
way; outputs are cached by source mtime in the build directory.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
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


def build_artifacts(program: Path = DEFAULT_PROGRAM, target: str = "p4sim",
                    build_dir: Path = REPO / "build" / "p4") -> PipelineArtifacts:
    program = Path(program).resolve()
    build_dir.mkdir(parents=True, exist_ok=True)
    stem = program.stem
    config = build_dir / f"{stem}.{target}.json"
    p4info = build_dir / f"{stem}.{target}.p4info.txtpb"
    sources = [program, *program.parent.glob("include/*.p4")]
    newest = max(p.stat().st_mtime for p in sources if p.exists())
    fresh = config.exists() and p4info.exists() and min(config.stat().st_mtime, p4info.stat().st_mtime) > newest
    if not fresh:
        if target == "p4sim":
            cmd = [_tool("p4sim"), "compile", str(program), "-o", str(config), "--p4runtime-files", str(p4info)]
        elif target == "bmv2":
            cmd = [_tool("p4c-bm2-ss"), "--arch", "v1model", "-o", str(config), "--p4runtime-files", str(p4info),
                   str(program)]
        else:
            raise ValueError(f"unknown target {target!r} (p4sim or bmv2)")
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            raise RuntimeError(f"compiling {program} for {target} failed:\n{done.stderr or done.stdout}")
    return PipelineArtifacts(program, target, load_p4info(p4info), config.read_bytes(), p4info, config)
