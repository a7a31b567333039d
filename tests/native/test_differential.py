"""The native pipeline against the Python one (the reference) at full size: 10,000 seeded random frames per
`p4src/` program with the entries the fabric controller installs, frame by frame and in batches of 64 (one call
into C per batch); 0 differences in packets, drops with their reasons, counters, registers and digests, and the
native path really runs (it must not silently fall back). difftest/pipelines.py does the work; the fast tier runs
it on 500 frames (test_random_pipelines.py), this file in `make test`."""
from __future__ import annotations

import pytest

from difftest.pipelines import run_p4src
from p4exec.native.build import compiler_available

pytestmark = [pytest.mark.skipif(compiler_available() is None, reason="no C compiler on this machine"),
              pytest.mark.slow]


@pytest.mark.parametrize("batch", [0, 64], ids=["frame-by-frame", "batches"])
@pytest.mark.parametrize("program", ["basic_l3", "ethplus"])
def test_10000_random_frames_identical(program: str, batch: int, tmp_path) -> None:
    res = run_p4src(program, 10000, seed=1, batch=batch, build_dir=tmp_path)
    assert res.native, f"{program} must run natively: {res.why_python}"
    assert res.details == [] and res.agree
    assert res.outputs > 500 and res.live > 0
