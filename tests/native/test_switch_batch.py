"""The switch loop's batch hand-off (`SwitchLoop.ingress_batch`, p4exec/switch/batch.py) against `ingress` frame by
frame: same-instant bursts of seeded random frames into a VirtualSwitch with the fabric controller's entries, the
Python pipeline frame by frame and the native one in batches; some ports paced slowly so that copies queue, wait
and are served by the traffic manager, one port down; and with a carrier lost and back and rates changed between
batches (the batch path keeps what each port would do with a copy, and must see every change). Equal: every frame on the wire (port, bytes, start), every
drop reason, counters and registers."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from controller.artifacts import PipelineArtifacts, build_artifacts
from difftest.fabric_entries import FabricView, small_fabric
from difftest.frames import Frame, FrameGen
from difftest.randomdiff import install, read_state
from difftest.targets import EmbeddedTarget
from p4exec.native import select
from p4exec.native.build import compiler_available
from p4exec.switch.program import make_live
from p4exec.switch.tm import QueueConfig
from tests.support.wire import Wire
from vfabric.events import Simulator
from vfabric.switch import VirtualSwitch

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(compiler_available() is None, reason="no C compiler on this machine")


@contextmanager
def pipeline_kind(kind: str) -> Iterator[None]:
    """Load programs on `kind` (python|native) inside the block, whatever this machine's default."""
    saved = select.default_pipeline
    select.default_pipeline = lambda: kind  # type: ignore[assignment]
    try:
        yield
    finally:
        select.default_pipeline = saved  # type: ignore[assignment]



def drive(target: EmbeddedTarget, frames: list, ports: list[int], batched: bool,
          changes: bool = False) -> tuple[list, dict, int]:
    sim = Simulator()
    vs = VirtualSwitch(sim, "s", 1, QueueConfig(depth=8), cpu_port=None)
    log: list = []
    for i, p in enumerate(ports):
        vs.attach(p, Wire(p, log, 1e9 if i % 2 else 100e9))   # every other port slow: copies queue there
    vs.set_port_up(ports[-1], False)
    vs.set_live(make_live(target.device.program))
    batch = 16
    for b, s in enumerate(range(0, len(frames), batch)):
        chunk = [(f.port, f.data, None) for f in frames[s:s + batch]]
        if batched:
            sim.at(b * 300, vs.ingress_batch, chunk)
        else:
            for port, data, ctx in chunk:
                sim.at(b * 300, vs.ingress, port, data, ctx)
    if changes:  # between batches: a carrier lost and back, a rate changed (the batch path's gates must see it)
        sim.at(20 * 300 + 150, vs.set_port_up, ports[0], False)
        sim.at(40 * 300 + 150, vs.set_port_up, ports[0], True)
        sim.at(30 * 300 + 150, lambda: vs.tm.configure(ports[2], rate_bps=0))  # unpaced: copies pass at once
        sim.at(50 * 300 + 150, lambda: vs.tm.configure(ports[2], rate_bps=1e9))  # paced again, and slow
        sim.at(60 * 300 + 150, lambda: vs.tm.configure(ports[1], rate_bps=400e9))
    sim.run()
    return log, dict(vs.drops), vs.executions


@pytest.fixture(scope="module")
def fabric() -> FabricView:
    return small_fabric()


@pytest.fixture(scope="module")
def frames(fabric: FabricView) -> list[Frame]:
    """The 3,000 seeded frames, built once (scapy takes seconds): every case reads the same list."""
    return FrameGen(fabric.topo, fabric.switch, fabric.ports, 5).frames(3000)


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], PipelineArtifacts]:
    """A program compiled once for the module, not once per case."""
    made: dict[str, PipelineArtifacts] = {}

    def get(program: str) -> PipelineArtifacts:
        if program not in made:
            made[program] = build_artifacts(ROOT / "p4src" / f"{program}.p4", "p4exec",
                                            tmp_path_factory.mktemp(program))
        return made[program]
    return get


@pytest.fixture(scope="module")
def python_runs() -> dict:
    """The Python pipeline frame by frame is the reference of both native modes: run once per (program, changes)."""
    return {}


def load(art: PipelineArtifacts, kind: str, program: str, view: FabricView) -> EmbeddedTarget:
    with pipeline_kind(kind):
        target = EmbeddedTarget(art)
    install(target, program, view, "ecmp")
    return target


@pytest.mark.parametrize(("program", "changes", "native_batched"),
                         [("ethplus", False, True), ("basic_l3", False, True), ("ethplus", True, True),
                          ("ethplus", False, False), ("basic_l3", False, False), ("ethplus", True, False)])
def test_batches_through_the_switch_loop_match_frame_by_frame(program: str, changes: bool, native_batched: bool,
                                                              fabric: FabricView, frames: list[Frame],
                                                              artifacts: Callable[[str], PipelineArtifacts],
                                                              python_runs: dict) -> None:
    """native_batched False: the native pipeline frame by frame too, each a batch of one (`run_one`, the path of a
    frame that arrives alone: ingress, the traffic manager's shortcut and egress in one call into C)."""
    view = fabric
    art = artifacts(program)
    if (program, changes) not in python_runs:
        py_target = load(art, "python", program, view)
        try:
            python_runs[program, changes] = (drive(py_target, frames, view.ports, batched=False, changes=changes),
                                             read_state(py_target.conn))
        finally:
            py_target.close()
    py, py_state = python_runs[program, changes]
    native = load(art, "native", program, view)
    try:
        assert type(native.device.program.loaded.pipeline).__name__ == "NativePipeline"
        nat = drive(native, frames, view.ports, batched=native_batched, changes=changes)
        assert len(py[0]) > 100 and py[1]["queue_full"] > 0
        assert py[0] == nat[0]
        assert py[1:] == nat[1:]
        assert py_state == read_state(native.conn)
    finally:
        native.close()
