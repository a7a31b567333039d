"""One STF test on both targets: p4exec (in process, virtual time) and BMv2 (the reference).

The verdict holds what each target sent per port, each target's own STF failures, and where the two
disagree. A program p4c-bm2-ss refuses has no BMv2 side; the compile error is kept as evidence.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from difftest.bmv2 import Bmv2StartError, ReferenceSwitch
from difftest.compile import Bmv2CompileError, compile_bmv2
from difftest.stf_bmv2 import Bmv2StfRunner
from p4exec.harness import Harness
from p4exec.stf import parse as S
from p4exec.stf.runner import StfRunner

ROOT = Path(__file__).resolve().parents[1]
INCLUDE_DIRS = (ROOT / "tests" / "p4" / "include", ROOT / "p4src" / "include")


@dataclass
class StfVerdict:
    stf: Path
    embedded_outputs: dict[int, list[bytes]] = field(default_factory=dict)
    embedded_failures: list[str] = field(default_factory=list)
    bmv2_outputs: dict[int, list[bytes]] = field(default_factory=dict)
    bmv2_failures: list[str] = field(default_factory=list)
    compile_error: str | None = None
    compile_warnings: str = ""
    load_error: str | None = None  # simple_switch_grpc refused the JSON p4c wrote

    def differences(self) -> list[str]:
        """Port by port, packet by packet, where p4exec's output is not BMv2's."""
        out = []
        for port in sorted(set(self.embedded_outputs) | set(self.bmv2_outputs)):
            mine, ref = self.embedded_outputs.get(port, []), self.bmv2_outputs.get(port, [])
            if len(mine) != len(ref):
                out.append(f"port {port}: p4exec sent {len(mine)} packet(s), BMv2 {len(ref)}")
            for i, (a, b) in enumerate(zip(mine, ref, strict=False)):
                if a != b:
                    out.append(f"port {port} packet #{i + 1}: p4exec {a.hex()} BMv2 {b.hex()}")
        return out

    @property
    def agree(self) -> bool:
        return self.compile_error is None and self.load_error is None and not self.differences()

    def report(self) -> str:
        lines = [f"{self.stf.name}:"]
        if self.compile_error is not None:
            lines.append(f"  p4c-bm2-ss refused the program: {first_error(self.compile_error)}")
        if self.load_error is not None:
            lines.append(f"  BMv2 could not load p4c's JSON: {self.load_error[:300]}")
        lines += [f"  differs: {d}" for d in self.differences()]
        lines += [f"  p4exec: {f}" for f in self.embedded_failures]
        lines += [f"  BMv2:   {f}" for f in self.bmv2_failures]
        return "\n".join(lines)


class CountingStfRunner(StfRunner):
    """p4exec's STF runner, noting how many packets each input produced (BMv2's wait hint)."""

    def __init__(self, harness: Harness, stf_name: str) -> None:
        super().__init__(harness, stf_name)
        self.per_packet: list[int] = []

    def exec(self, st: S.Stmt) -> None:
        before = sum(len(v) for v in self.outputs.values())
        super().exec(st)
        if isinstance(st, S.Packet):
            self.per_packet.append(sum(len(v) for v in self.outputs.values()) - before)


def first_error(diagnostics: str) -> str:
    """The first line of p4c's report that is an error (warnings come first sometimes)."""
    lines = diagnostics.splitlines() or [""]
    return next((ln for ln in lines if "error" in ln.lower()), lines[0])[:300]


def program_for(stf: Path) -> Path:
    """tests/p4/NAME.stf runs NAME.p4 beside it; tests/dataplane/PROG_*.stf runs p4src/PROG.p4."""
    beside = stf.with_suffix(".p4")
    if beside.exists():
        return beside
    programs = sorted((ROOT / "p4src").glob("*.p4"), key=lambda p: -len(p.stem))
    for p in programs:
        if stf.stem == p.stem or stf.stem.startswith(p.stem + "_"):
            return p
    raise FileNotFoundError(f"{stf}: no {beside.name} beside it and no p4src/ program its name starts with")


def run_both(stf: Path, program: Path | None = None, work_dir: Path | None = None, seed: int = 1) -> StfVerdict:
    program = program or program_for(stf)
    stmts = S.parse_stf_file(stf)
    verdict = StfVerdict(stf)
    counting = CountingStfRunner(Harness.from_file(str(program), seed=seed,
                                                   include_dirs=[str(d) for d in INCLUDE_DIRS]), str(stf))
    embedded = counting.run(stmts)
    verdict.embedded_outputs = {p: v for p, v in embedded.outputs.items() if v}
    verdict.embedded_failures = [] if embedded.passed else embedded.messages
    with tempfile.TemporaryDirectory(prefix="ethlab-difftest-build-", dir=work_dir) as tmp:
        try:
            build = compile_bmv2(program, Path(tmp), INCLUDE_DIRS)
        except Bmv2CompileError as e:
            verdict.compile_error = str(e)
            return verdict
        verdict.compile_warnings = build.warnings
        # p4exec's tables (already run, only their key fields are read) say how STF values become matches
        try:
            sw = ReferenceSwitch(build.json_path)
        except Bmv2StartError as e:
            verdict.load_error = str(e)
            return verdict
        with sw:
            ref = Bmv2StfRunner(sw, build.json_path, counting.h, str(stf), counting.per_packet).run(stmts)
    verdict.bmv2_outputs = {p: v for p, v in ref.outputs.items() if v}
    verdict.bmv2_failures = ref.failures
    return verdict
