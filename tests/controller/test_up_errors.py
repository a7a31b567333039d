"""`ethlab up` on a bad topology, parameter or program: exit 1 with one clear line on stderr, no traceback
(nothing is brought up: these fail before any namespace exists)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _up(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ethlab.cli", "up", *args, "--check"], capture_output=True,
                          text=True, timeout=120, cwd=ROOT, env={"PATH": "/usr/bin:/bin", "COLUMNS": "60"})


@pytest.mark.parametrize(("args", "expected"), [
    (("nosuch",), "unknown topology 'nosuch'"),
    (("erack", "--gpus", "-3"), "gpus: -3 is below the minimum"),
    (("erack", "--bogus", "3"), "unknown parameter 'bogus'"),
    (("leafspine", "--program", "/nonexistent/x.p4"), "not found"),
])
def test_bad_input_is_one_line(args: tuple[str, ...], expected: str) -> None:
    done = _up(*args)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ethlab up: error:") and expected in lines[0], done.stderr
    assert "Traceback" not in done.stderr + done.stdout


def test_bad_program_names_the_located_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.p4"
    bad.write_text("control X() { apply { } }\n")
    done = _up("leafspine", "--program", str(bad))
    assert done.returncode == 1
    [line] = done.stderr.strip().splitlines()
    assert f"{bad}:1:1: error:" in line and "Traceback" not in done.stderr
