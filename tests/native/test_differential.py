"""The native pipeline against the Python one (the reference): 10,000 seeded random frames per `p4src/` program
with the fabric controller's entries, 0 differences in packets, drops, counters and registers; and the native
path really runs (it must not silently fall back)."""
from __future__ import annotations

import pytest

from p4exec.native.build import compiler_available
from tests.native.diff import run

pytestmark = pytest.mark.skipif(compiler_available() is None, reason="no C compiler on this machine")


@pytest.mark.parametrize("program", ["basic_l3", "ethplus"])
def test_random_frames_identical(program: str, tmp_path) -> None:
    r = run(program, 10000, seed=1, build_dir=tmp_path)
    assert r["pipelines"] == {"python": "V1Pipeline", "native": "NativePipeline"}
    assert r["outputs"] > 0 and r["state_cells"] > 0
    assert r["diffs"] == [] and r["state_diffs"] == []


@pytest.mark.parametrize("program", ["basic_l3", "ethplus"])
def test_batches_identical(program: str, tmp_path) -> None:
    """process_batch (one call into C per 64 frames) gives what process gives frame by frame."""
    r = run(program, 4000, seed=2, build_dir=tmp_path, batch=64)
    assert r["pipelines"] == {"python": "V1Pipeline", "native": "NativePipeline"}
    assert r["outputs"] > 0
    assert r["diffs"] == [] and r["state_diffs"] == []
