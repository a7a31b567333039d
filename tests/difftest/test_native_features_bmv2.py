"""The native pipeline's feature programs (tests/native/p4/*.p4) against BMv2: each STF meets its expectations on
BMv2 and on p4exec, with the same packets. Their expectations are BMv2's behaviour (sub-parsers that reject,
lookahead, unions of stacks...), so this keeps them honest; tests/native/test_native_features.py runs them on both
p4exec pipelines. Skips without the toolchain, as every BMv2 test does."""
from __future__ import annotations

from pathlib import Path

import pytest

from difftest.stf_both import run_both
from difftest.toolchain import skip_reason

FEATURES = sorted((Path(__file__).resolve().parents[1] / "native" / "p4").glob("*.stf"))
# programs the reference toolchain cannot run (measured with p4c 1.2.4.17 and this BMv2): p4exec's side must still
# meet its STF, and the toolchain must still fail, so a fixed toolchain shows up here
NO_BMV2 = {
    "emit_dynamic_index": "simple_switch_grpc cannot load p4c's JSON ('Type is not convertible to string')",
    "union_stack": "p4c-bm2-ss crashes on a stack of header unions (exit status -11)",
}


@pytest.mark.bmv2
@pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")
@pytest.mark.timeout(600)
@pytest.mark.parametrize("stf", FEATURES, ids=[f.stem for f in FEATURES])
def test_feature_program_agrees_with_bmv2(stf: Path) -> None:
    verdict = run_both(stf, stf.with_suffix(".p4"))
    if stf.stem in NO_BMV2:
        assert not verdict.embedded_failures, verdict.report()
        assert verdict.compile_error or verdict.load_error, f"BMv2 runs it now: drop it from NO_BMV2\n{verdict.report()}"
        return
    assert verdict.agree and not verdict.bmv2_failures and not verdict.embedded_failures, verdict.report()


def test_every_feature_program_has_an_stf() -> None:
    assert FEATURES
    assert {f.stem for f in FEATURES} == {p.stem for p in FEATURES[0].parent.glob("*.p4")}
    assert set(NO_BMV2) <= {f.stem for f in FEATURES}
