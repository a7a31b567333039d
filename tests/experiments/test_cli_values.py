"""Values `ethlab` used to accept silently (issue 34, point 12): one clear error line instead."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.experiments.test_cli_input import SPEC, assert_refused, run_cli


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e400"])
def test_non_finite_topology_parameters_are_refused(capsys: pytest.CaptureFixture[str], value: str) -> None:
    for argv in (["topo", "show", "line", "--rate-gbps", value],
                 ["up", "line", "--rate-gbps", value, "--check", "--dry-run"]):
        code, text = run_cli(argv, capsys)
        assert_refused(code, text, "rate_gbps", "finite")


@pytest.mark.parametrize("reps", ["1000000000", "101", "0", "-1"])
def test_repetitions_stay_in_the_specs_range(tmp_path: Path, capsys: pytest.CaptureFixture[str], reps: str) -> None:
    spec = tmp_path / "tiny.yaml"
    spec.write_text(yaml.safe_dump(SPEC))
    code, text = run_cli(["run", str(spec), "--repetitions", reps, "--dry-run"], capsys)
    assert_refused(code, text, "--repetitions", "1..100")


def test_png_into_a_missing_directory_creates_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "missing" / "dir" / "x.png"
    code, text = run_cli(["topo", "show", "line", "--png", str(target)], capsys)
    assert_refused(code, text, "does not exist")
    assert not (tmp_path / "missing").exists()
    code, text = run_cli(["topo", "show", "line", "--png", str(tmp_path / "x.png")], capsys)
    assert code == 0 and (tmp_path / "x.png").stat().st_size > 0
