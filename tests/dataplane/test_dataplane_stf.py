"""Run every STF file of tests/dataplane with `p4exec stf`, the way users and CI do.

Also checks that the generated STF files are up to date with gen_stf.py, so a
change to the frames or to traffic/layers.py cannot leave stale hex behind.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from p4exec.native.build import compiler_available
from tests.dataplane import gen_inc_stf, gen_stf

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
P4EXEC = Path(sys.executable).parent / "p4exec"

CASES = [
    ("basic_l3.p4", "basic_l3.stf"),
    ("ethplus.p4", "ethplus_parse.stf"),
    ("ethplus.p4", "ethplus_forwarding.stf"),
    ("ethplus.p4", "ethplus_failover.stf"),
    ("ethplus.p4", "ethplus_adaptive.stf"),
    ("ethplus.p4", "ethplus_local.stf"),
    ("ethplus.p4", "ethplus_trim.stf"),
    ("ethplus_inc.p4", "ethplus_inc_aggregation.stf"),
]


@pytest.mark.parametrize("pipeline", ["python", "native"])
@pytest.mark.parametrize(("program", "stf"), CASES, ids=[s for _, s in CASES])
def test_stf(program: str, stf: str, pipeline: str, capsys: pytest.CaptureFixture[str],
             caplog: pytest.LogCaptureFixture) -> None:
    """Each file on both pipelines through the command's own entry point (`p4exec.cli.main`, what the `p4exec`
    script calls) in this process, so a program is compiled once per worker and not once per file and pipeline;
    the native pipeline must really run (these programs are all in its reach)."""
    from p4exec.cli import main

    returncode = main(["stf", "--pipeline", pipeline, str(ROOT / "p4src" / program), str(HERE / stf)])
    captured = capsys.readouterr()
    assert returncode == 0, captured.out + captured.err
    if pipeline == "native" and compiler_available() is not None:
        assert "native pipeline not used" not in captured.err + caplog.text, captured.err + caplog.text


@pytest.mark.parametrize("pipeline", ["python", "native"])
def test_the_command_runs_an_stf(pipeline: str) -> None:
    """The installed `p4exec` command as a process, the way users and CI run it, on one file per pipeline."""
    program, stf = "ethplus.p4", "ethplus_forwarding.stf"
    run = subprocess.run([str(P4EXEC), "stf", "--pipeline", pipeline, str(ROOT / "p4src" / program), str(HERE / stf)],
                         capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert run.returncode == 0, run.stdout + run.stderr
    if pipeline == "native" and compiler_available() is not None:
        assert "native pipeline not used" not in run.stderr, run.stderr


def test_every_stf_file_is_run() -> None:
    assert {s for _, s in CASES} == {p.name for p in HERE.glob("*.stf")}


def test_generated_stf_files_are_current(tmp_path: Path) -> None:
    gen_stf.main(tmp_path)
    fresh = {p.name: p.read_text() for p in tmp_path.glob("*.stf")}
    committed = {p.name: p.read_text() for p in HERE.glob("ethplus_*.stf") if not p.name.startswith("ethplus_inc_")}
    assert fresh == committed


def test_generated_inc_stf_is_current(tmp_path: Path) -> None:
    gen_inc_stf.main(tmp_path)
    assert (tmp_path / gen_inc_stf.NAME).read_text() == (HERE / gen_inc_stf.NAME).read_text()
