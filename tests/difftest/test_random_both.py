"""Seeded random frames through p4exec and BMv2 with the fabric controller's entries for one leaf.

The full run (10,000 frames per program) is `python -m difftest random`; here 2,000 per program. The
toolchain-free checks make sure the frame mix and the controller's entries are what the differential uses.
"""

from __future__ import annotations

from collections import Counter

import pytest

from controller.artifacts import build_artifacts
from controller.client import SwitchConnection
from difftest.fabric_entries import small_fabric, updates_for
from difftest.frames import KINDS, FrameGen
from difftest.randomdiff import PROGRAMS, ROOT, run_random
from difftest.toolchain import skip_reason

needs_bmv2 = pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory):
    """One compile per program and target for the whole module."""
    return tmp_path_factory.mktemp("difftest-build")


@pytest.mark.bmv2
@needs_bmv2
@pytest.mark.timeout(900)
@pytest.mark.parametrize(("program", "policy"), [("basic_l3", "ecmp"), ("ethplus", "ecmp"), ("ethplus", "spray")])
def test_random_frames_agree(program: str, policy: str, build_dir) -> None:
    report = run_random(program, 2000, seed=7, policy=policy, build_dir=build_dir)
    assert sum(report.sent.values()) == 2000
    assert report.outputs["p4exec"] > 100  # the mix is not all drops
    assert report.agree, report.summary()


def test_frames_are_seeded_and_mixed() -> None:
    view = small_fabric()
    a = FrameGen(view.topo, view.switch, view.ports, seed=3).frames(600)
    b = FrameGen(view.topo, view.switch, view.ports, seed=3).frames(600)
    assert a == b
    kinds = Counter(f.kind for f in a)
    assert set(kinds) == set(KINDS) and min(kinds.values()) > 50
    assert any(len(f.data) < 14 for f in a)  # malformed: shorter than an Ethernet header
    assert {f.port for f in a} >= set(view.ports)


@pytest.mark.parametrize("program", PROGRAMS)
def test_entries_come_from_the_controller(program: str, build_dir) -> None:
    """The differential installs what the fabric controller computes for leaf1 (no switch needed to build
    the updates: they only need the P4Info)."""
    artifacts = build_artifacts(ROOT / "p4src" / f"{program}.p4", "p4exec", build_dir)
    conn = SwitchConnection("127.0.0.1:1", p4info=artifacts.p4info)
    view = small_fabric()
    updates = updates_for(program, conn, view)
    tables = Counter(u.entity.WhichOneof("entity") for u in updates)
    assert tables["table_entry"] >= len(view.routes.routes)
    if program == "ethplus":
        assert tables["action_profile_group"] >= 1  # the ECMP groups of the two spines
