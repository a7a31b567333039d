"""Without a C compiler the default is the Python pipeline, said in one line, and the demo still runs: CC names a
missing binary (as cffi's build would use it), so nothing can be compiled."""
from __future__ import annotations

import csv
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from p4exec.native import build as native_build
from p4exec.native import select

ROOT = Path(__file__).resolve().parents[2]
ETHLAB = Path(sys.executable).parent / "ethlab"


def test_default_is_native_with_a_compiler_python_without(monkeypatch, caplog) -> None:
    monkeypatch.delenv("P4EXEC_PIPELINE", raising=False)
    monkeypatch.setattr(select, "_override", [])
    monkeypatch.setattr(select, "_said_no_cc", [])
    monkeypatch.setenv("CC", "/nonexistent/cc")
    assert native_build.compiler_available() is None
    with caplog.at_level(logging.WARNING, logger="p4exec.native"):
        assert select.default_pipeline() == "python"
        assert select.default_pipeline() == "python"
    said = [r.getMessage() for r in caplog.records if "no C compiler" in r.getMessage()]
    assert len(said) == 1 and "/nonexistent/cc" in said[0]
    monkeypatch.delenv("CC")
    if native_build.compiler_available() is not None:
        assert select.default_pipeline() == "native"


@pytest.mark.slow  # the whole CLI on a three-trial spec in a child process: the full tier's (make test)
def test_demo_runs_on_the_python_pipeline_without_a_compiler(tmp_path) -> None:
    env = dict(os.environ, CC="/nonexistent/cc", HOME=str(tmp_path))   # empty cache: no earlier build to reuse
    env.pop("P4EXEC_PIPELINE", None)
    out = tmp_path / "demo"
    r = subprocess.run([str(ETHLAB), "run", str(ROOT / "experiments" / "demo-virtual.yaml"), "--repetitions", "1",
                        "--out", str(out)], capture_output=True, text=True, timeout=600, env=env, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "Traceback" not in r.stderr
    assert r.stderr.count("no C compiler found") == 1, r.stderr[-2000:]
    rows = list(csv.DictReader((out / "trials.csv").open()))
    assert len(rows) == 3 and all(row["complete"] == "True" for row in rows)
    assert all(row["packets_delivered"] == rows[0]["packets_delivered"] != "0" for row in rows)
