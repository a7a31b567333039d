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
def test_bad_input_is_one_line(args: tuple[str, ...], expected: str, capsys: pytest.CaptureFixture[str],
                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the command's entry point (`ethlab.cli.main`) in this process: an exception escaping `main`
    fails the test as a traceback would; test_bad_program_names_the_located_error runs the command as a process."""
    from ethlab.cli import main

    monkeypatch.setenv("COLUMNS", "60")
    monkeypatch.chdir(ROOT)
    try:
        returncode = main(["up", *args, "--check"])
    except SystemExit as stop:
        returncode = stop.code
    out = capsys.readouterr()
    assert returncode == 1, out.out + out.err
    lines = out.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ethlab up: error:") and expected in lines[0], out.err


def test_bad_program_names_the_located_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.p4"
    bad.write_text("control X() { apply { } }\n")
    done = _up("leafspine", "--program", str(bad))
    assert done.returncode == 1
    [line] = done.stderr.strip().splitlines()
    assert f"{bad}:1:1: error:" in line and "Traceback" not in done.stderr
