"""Compile a P4 program with p4c-bm2-ss into BMv2 JSON and P4Info, once per program and run."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from difftest.toolchain import COMPILER


@dataclass(frozen=True)
class Bmv2Build:
    json_path: Path
    p4info_path: Path | None
    warnings: str = ""  # p4c's report of a successful compile (e.g. "Target does not support ...")


class Bmv2CompileError(RuntimeError):
    """p4c-bm2-ss refused the program; the message is its diagnostics."""


def compile_bmv2(program: Path, out_dir: Path, include_dirs: tuple[Path, ...] = (), p4info: bool = False,
                 timeout_s: float = 300.0) -> Bmv2Build:
    """JSON always; P4Info only when asked: p4c then also refuses what P4Runtime cannot express (an
    anonymous action profile), which an STF test over Thrift does not need."""
    exe = shutil.which(COMPILER)
    if exe is None:
        raise Bmv2CompileError(f"{COMPILER} not on PATH")
    out_dir.mkdir(parents=True, exist_ok=True)
    build = Bmv2Build(out_dir / f"{program.stem}.json", out_dir / f"{program.stem}.p4info.txtpb" if p4info else None)
    cmd = [exe, "--std", "p4-16", "--arch", "v1model", "-o", str(build.json_path)]
    if build.p4info_path is not None:
        cmd += ["--p4runtime-files", str(build.p4info_path)]
    for inc in include_dirs:
        cmd += ["-I", str(inc)]
    done = subprocess.run([*cmd, str(program)], capture_output=True, text=True, timeout=timeout_s)
    if done.returncode != 0 or not build.json_path.exists():
        raise Bmv2CompileError((done.stderr + done.stdout).strip() or f"exit status {done.returncode}")
    return Bmv2Build(build.json_path, build.p4info_path, (done.stderr + done.stdout).strip())
