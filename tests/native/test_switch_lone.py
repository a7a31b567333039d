"""A frame that arrives alone at a switch (`SwitchLoop.ingress` with the native pipeline: `run_one` in
p4exec/switch/batch.py, ingress + the traffic manager's shortcut + egress in one call into C) against the Python
pipeline's `ingress`, frame by frame, on the feature programs whose packets leave the common path: multicast, I2E
and E2E clones, resubmit, recirculation, clone and drop, a failed assert. The native pipeline also runs the same
frames in same-instant batches (`run_batch`). Equal: every frame on the wire (port, bytes, start), every frame to the
CPU, the switch's drop reasons, the pipeline's counted outcomes, every register/counter cell and digest."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from difftest.pipelines import feature_frames, state_cells
from p4exec.compiler.program import compile_file
from p4exec.device.program import Program
from p4exec.harness import Harness
from p4exec.native.build import compiler_available
from p4exec.stf import parse as S
from p4exec.stf.parse import parse_stf_file
from p4exec.stf.runner import StfRunner
from p4exec.switch.program import make_live
from p4exec.switch.tm import QueueConfig
from p4exec.v1model.loader import load
from tests.support.wire import Wire
from vfabric.events import Simulator
from vfabric.switch import VirtualSwitch

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(compiler_available() is None, reason="no C compiler on this machine")

PROGRAMS = ("40_clone_i2e", "41_clone_e2e", "43_resubmit", "44_recirculate", "47_multicast", "57_clone_and_drop",
            "64_recirculate_length", "48_log_assert")
SETUP = (S.AddEntry, S.SetDefault, S.MirroringAdd, S.MirroringAddMc, S.McMgrpCreate, S.McNodeCreate,
         S.McNodeUpdate, S.McNodeAssociate, S.RegisterWrite, S.CounterWrite)
PORTS = range(8)



def loaded(path: Path, kind: str) -> Any:
    lp = load(compile_file(str(path)), seed=3, pipeline=kind)
    stf = path.with_suffix(".stf")
    if stf.is_file():
        StfRunner(Harness(lp), str(stf)).run([st for st in parse_stf_file(str(stf)) if isinstance(st, SETUP)])
    return lp


def drive(lp: Any, frames: list[tuple[str, int, bytes]], together: int) -> tuple[list, list, dict, dict, dict]:
    """Frames `together` at a time at one instant (1: each alone), 150 ns apart; every other port slow, so copies
    queue there and the free ports take them at once."""
    sim = Simulator()
    vs = VirtualSwitch(sim, "s", 1, QueueConfig(depth=4))
    log: list = []
    cpu: list = []
    for p in PORTS:
        vs.attach(p, Wire(p, log, 1e9 if p % 2 else 100e9))  # type: ignore[arg-type]
    vs.add_packet_in_listener(cpu.append)
    vs.set_port_up(6, False)
    vs.set_live(make_live(Program(lp.p4info, b"", lp.state, lp)))
    for k in range(0, len(frames), together):
        chunk = [(p, d, None) for _kind, p, d in frames[k:k + together]]
        if together == 1:
            sim.at(k * 150, vs.ingress, *chunk[0])
        else:
            sim.at(k * 150, vs.ingress_batch, chunk)
    sim.run()
    stats = {k: v for k, v in lp.pipeline.stats.items() if v}
    return log, cpu, dict(vs.drops), stats, state_cells(lp.state)


@pytest.mark.parametrize("program", PROGRAMS)
def test_a_lone_frame_through_c_matches_the_python_pipeline(program: str) -> None:
    path = ROOT / "tests" / "p4" / f"{program}.p4"
    stf = path.with_suffix(".stf")
    frames = feature_frames(stf.read_text() if stf.is_file() else "", 7, 600)
    py = drive(loaded(path, "python"), frames, 1)
    nat_lp = loaded(path, "native")
    assert type(nat_lp.pipeline).__name__ == "NativePipeline"
    lone = drive(nat_lp, frames, 1)
    assert len(py[0]) > 20
    assert lone[0] == py[0]
    assert lone[1:] == py[1:]
    # the same frames 4 to an instant: the native batch path against Python's `ingress` of each in turn
    assert drive(loaded(path, "native"), frames, 4) == drive(loaded(path, "python"), frames, 4)
