"""Where the pipeline is chosen: `fabric.pipeline` in experiment specs, the trial-scoped choice, the CLI."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ethlab.experiment.spec import SpecError, parse_spec
from p4exec.native import select
from p4exec.native.build import compiler_available
from tests.native.test_native_pipeline import WIDER_THAN_128

ROOT = Path(__file__).resolve().parents[2]
P4EXEC = Path(sys.executable).parent / "p4exec"


def spec(fabric: dict) -> dict:
    return {"name": "tiny", "topology": {"name": "leafspine"}, "seed": 7, "repetitions": 1, "fabric": fabric,
            "traffic": {"pattern": "all_reduce", "algorithm": "ring", "size": "64KiB", "iterations": 1},
            "policies": [{"name": "ecmp"}]}


def test_fabric_pipeline_key() -> None:
    s = parse_spec(spec({"pipeline": "native"}))
    assert s.fabric_options(s.variants[0])["pipeline"] == "native"
    with pytest.raises(SpecError, match="pipeline"):
        parse_spec(spec({"pipeline": "fast"}))


def test_pipeline_choice_is_scoped(monkeypatch) -> None:
    monkeypatch.delenv("P4EXEC_PIPELINE", raising=False)
    monkeypatch.setattr(select, "_override", [])
    base = select.default_pipeline()
    assert base == ("native" if compiler_available() else "python")
    with select.pipeline_choice("python"):
        assert select.default_pipeline() == "python"
        assert os.environ["P4EXEC_PIPELINE"] == "python"       # inherited by `p4exec switch` processes
    assert select.default_pipeline() == base and "P4EXEC_PIPELINE" not in os.environ
    with select.pipeline_choice(None):
        assert select.default_pipeline() == base


@pytest.mark.skipif(compiler_available() is None, reason="no C compiler on this machine")
def test_cli_emit_c_and_stf_on_native(tmp_path) -> None:
    out = tmp_path / "ethplus.c"
    r = subprocess.run([str(P4EXEC), "compile", str(ROOT / "p4src" / "ethplus.p4"), "--pipeline", "native",
                        "--emit-c", str(out)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "p4n_ingress" in out.read_text()
    wide = tmp_path / "wide256.p4"      # a construct the C generator declines: the reason, no traceback
    wide.write_text(WIDER_THAN_128)
    r = subprocess.run([str(P4EXEC), "compile", str(wide), "--pipeline", "native"], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and "wider than 128 bits" in r.stderr and "Traceback" not in r.stderr
    prog = ROOT / "tests" / "p4" / "77_for_loops.p4"
    r = subprocess.run([str(P4EXEC), "stf", "--pipeline", "native", str(prog), str(prog.with_suffix(".stf"))],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "PASS" in r.stdout, r.stdout + r.stderr
    assert "native pipeline not used" not in r.stderr
