"""Negative suite: every invalid program in tests/p4/negative must be rejected with a located error.

Each program's first line is `// expect-error: LINE:COL: SUBSTRING`. `p4exec compile` must exit 1,
print `FILE:LINE:COL` and the substring on stderr, and never show a Python traceback.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

NEGATIVE = Path(__file__).resolve().parents[1] / "p4" / "negative"
P4EXEC = Path(sys.executable).parent / "p4exec"
PROGRAMS = sorted(NEGATIVE.glob("*.p4"))
HEADER = re.compile(r"^// expect-error: (\d+):(\d+): (.+)$")


def expectation(prog: Path) -> tuple[int, int, str]:
    """Read the expected location and message substring from the program's first line."""
    first = prog.read_text().split("\n", 1)[0]
    m = HEADER.match(first)
    assert m, f"{prog.name}: first line must be '// expect-error: LINE:COL: SUBSTRING'"
    return int(m[1]), int(m[2]), m[3].strip()


def test_negative_suite_size() -> None:
    """The acceptance criterion asks for at least 20 invalid programs, each with an expectation."""
    assert len(PROGRAMS) >= 20
    for prog in PROGRAMS:
        line, col, sub = expectation(prog)
        assert line >= 1 and col >= 1 and sub


@pytest.mark.parametrize("prog", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_rejected_with_location(prog: Path, tmp_path: Path) -> None:
    """Compile one invalid program: exit 1, `FILE:LINE:COL` plus the message, no traceback."""
    line, col, sub = expectation(prog)
    res = subprocess.run(
        [str(P4EXEC), "compile", str(prog), "-o", str(tmp_path / "out.json"),
         "--p4runtime-files", str(tmp_path / "out.p4info.txtpb")],
        capture_output=True, text=True, timeout=60,
    )
    err = res.stderr
    assert "Traceback" not in err and "Traceback" not in res.stdout, err
    assert res.returncode == 1, f"exit status {res.returncode}\n{res.stdout}\n{err}"
    assert f"{prog.name}:{line}:{col}" in err, f"expected location {prog.name}:{line}:{col}\n{err}"
    located = [ln for ln in err.splitlines() if f"{prog.name}:{line}:{col}" in ln]
    assert any(sub.lower() in ln.lower() for ln in located), f"expected {sub!r} in\n{err}"
    assert not (tmp_path / "out.json").exists(), "no output may be written for an invalid program"
