"""difftest/pipelines.py on a smaller count: seeded random frames through the Python and the native pipeline of
every `p4src/` program with the entries the fabric controller installs (ethplus_inc.p4 with its aggregation jobs)
and of every feature program of tests/p4 with its STF's entries: 0 differences in packets, drops with their
reasons, counters and registers. The full run (10,000 frames per program) is `python -m difftest.pipelines`;
its numbers are in docs/difftest.md."""
from __future__ import annotations

from pathlib import Path

import pytest

from difftest.pipelines import FEATURES, P4SRC, feature_programs, run_feature, run_p4src
from p4exec.native.build import compiler_available
from traffic.inc.wire import EVENTS

pytestmark = pytest.mark.skipif(compiler_available() is None, reason="no C compiler on this machine")

FRAMES = 500
FEATURE_FRAMES = 150  # 94 programs: the whole file stays well under a minute


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One build folder for the module: a program compiled for one case is reused by the next (build_artifacts
    keeps outputs newer than their sources), instead of a `p4exec compile` process per case."""
    return tmp_path_factory.mktemp("p4src-build")


@pytest.mark.parametrize("batch", [0, 64], ids=["frame-by-frame", "batches"])
@pytest.mark.parametrize("program", P4SRC)
def test_p4src_program_same_on_both(program: str, batch: int, build_dir: Path) -> None:
    res = run_p4src(program, FRAMES, seed=7, batch=batch, build_dir=build_dir)
    assert res.native, f"{program} must run natively: {res.why_python}"
    assert res.details == [] and res.agree
    assert res.outputs > FRAMES // 20 and res.live > 0
    if not batch:   # the frames reach the program's parts: forwarded, dropped by it, rejected by the parser
        assert res.drops["malformed"] > 0 and res.drops["dropped by the program"] > 0


def test_inc_frames_exercise_the_aggregation(build_dir: Path) -> None:
    """ethplus_inc.p4's INC frames meet every outcome that matters (absorbed, completed, duplicate, unknown job,
    not a member, bad slot, stale): the random frames reach the aggregation, not only its error paths."""
    from contextlib import ExitStack

    from difftest.fabric_entries import small_fabric
    from difftest.frames import INC_KINDS, FrameGen
    from difftest.pipelines import SWITCH, fabric_switch, inc_jobs_on_switch

    view = small_fabric()
    frames = FrameGen(view.topo, SWITCH, view.ports, 7, INC_KINDS, inc_jobs_on_switch()).frames(FRAMES)
    with ExitStack() as stack:
        nat = stack.enter_context(fabric_switch("ethplus_inc", "native", build_dir))
        for i, f in enumerate(frames):
            nat.run(f.port, f.data, i)
        events = dict(zip(EVENTS, nat.state.counters["MyIngress.agg.inc_events"].packets, strict=False))
    for outcome in ("absorbed", "completed", "duplicate", "unknown_job", "not_member", "bad_slot", "stale"):
        assert events[outcome] > 0, events


def test_feature_programs_same_on_both() -> None:
    ran, native = 0, 0
    failures = []
    for path in feature_programs():
        res = run_feature(path, FEATURE_FRAMES, seed=7)
        if res is None:
            continue
        ran += 1
        native += res.native
        if not res.agree:
            failures.append(res.line())
    assert failures == []
    assert ran >= 90 and native >= 69   # 69: tests/native/test_stf_native.py's MIN_NATIVE


def test_a_rejected_frame_that_then_faults_is_malformed_on_both(tmp_path) -> None:
    """Found by the 10,000-frame run on 48_log_assert: a 2-byte frame fails the parser and then the ingress
    `assert(hdr.h.isValid())`. Python keeps it malformed (the switch counts the drop as `malformed`); the native
    pipeline said `pipeline`, per frame and in the switch loop's batches."""
    from p4exec.compiler.program import compile_file
    from p4exec.device.program import Program
    from p4exec.switch.program import make_live
    from p4exec.switch.tm import QueueConfig
    from p4exec.v1model.loader import load
    from tests.native.test_switch_batch import Wire
    from vfabric.events import Simulator
    from vfabric.switch import VirtualSwitch

    prog = compile_file(str(FEATURES / "48_log_assert.p4"))
    drops = {}
    for kind in ("python", "native"):
        lp = load(prog, pipeline=kind)
        assert lp.pipeline.ingress(1, b"\x01\x02", 0) == []
        assert lp.pipeline.last_malformed and lp.pipeline.stats["assert_failed"] == 1, kind
        sim = Simulator()
        vs = VirtualSwitch(sim, "s", 1, QueueConfig(depth=8), cpu_port=None)
        vs.attach(1, Wire(1, [], 100e9))
        vs.set_live(make_live(Program(prog.p4info, b"", lp.state, lp)))
        burst = [(1, b"\x01\x02", None), (1, b"\x01\x02\x03\x04", None), (1, b"\x05", None)]
        sim.at(0, vs.ingress_batch, burst)
        sim.run()
        drops[kind] = dict(vs.drops)
    assert type(load(prog, pipeline="native").pipeline).__name__ == "NativePipeline"
    assert drops["native"] == drops["python"] and drops["python"].get("malformed") == 2
