"""`--out DIR` is a directory of ours, new or empty (issue 34, points 9 and 10): a planted symlink cannot make
root overwrite its target, and an interrupted run's files are never mixed into a new report."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from ethlab.outdir import OutDirError, claim_out_dir, open_result
from tests.experiments.test_cli_input import SPEC, run_cli


def _traffic(out: Path) -> list[str]:
    return ["traffic", "run", "all_reduce", "--topo", "leafspine", "--size", "16KiB", "--out", str(out)]


def test_a_planted_symlink_is_never_followed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    out = tmp_path / "ar"
    out.mkdir()
    (out / "command.json").symlink_to(victim)
    code, text = run_cli(_traffic(out), capsys)
    assert code != 0 and "is not empty" in text and "nothing was written" in text, text
    assert victim.read_text() == "precious\n"
    with pytest.raises(OSError):  # and the writer itself refuses a link at a result file's place
        open_result(out / "command.json").close()
    assert victim.read_text() == "precious\n"


@pytest.mark.parametrize("make", ["symlink", "others-writable", "foreign-owner", "file"])
def test_an_out_dir_that_is_not_ours_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                make: str) -> None:
    out = tmp_path / "out"
    if make == "symlink":
        (tmp_path / "real").mkdir()
        out.symlink_to(tmp_path / "real")
    elif make == "file":
        out.write_text("x")
    else:
        out.mkdir()
        if make == "others-writable":
            out.chmod(0o777)
        else:
            os.chown(out, 65534, 65534)
    code, text = run_cli(_traffic(out), capsys)
    assert code != 0 and "--out" in text and "Traceback" not in text, text
    assert not (tmp_path / "real").exists() or not any((tmp_path / "real").iterdir())


def test_rerun_into_an_interrupted_runs_directory_is_refused(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "tiny.yaml"
    spec.write_text(yaml.safe_dump(SPEC))
    out = tmp_path / "res"
    out.mkdir()
    (out / "error.txt").write_text("interrupted\n")  # what an interrupted run leaves
    (out / "runs").mkdir()
    code, text = run_cli(["run", str(spec), "--out", str(out)], capsys)
    assert code != 0 and "is not empty" in text and "earlier run" in text, text
    assert sorted(p.name for p in out.iterdir()) == ["error.txt", "runs"]  # untouched


def test_new_and_empty_directories_are_accepted(tmp_path: Path) -> None:
    fresh = claim_out_dir(tmp_path / "a" / "b")
    assert fresh.is_dir() and (fresh.stat().st_mode & 0o022) == 0
    (tmp_path / "empty").mkdir()
    assert claim_out_dir(tmp_path / "empty") == tmp_path / "empty"
    with open_result(fresh / "metrics.json") as f:
        f.write("{}")
    with pytest.raises(OutDirError, match="not empty"):
        claim_out_dir(fresh)
