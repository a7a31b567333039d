"""`ethlab down` ends `ethlab up` (issue 34, point 8): the `up` process gets SIGTERM, stops its controller
(and with it the switch watcher) before its switches, prints its teardown summary and exits 0 — instead of
running on, printing liveness errors, after its switches were killed from outside."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.netns
def test_down_ends_up_cleanly(tmp_path: Path) -> None:
    assert os.geteuid() == 0, "needs root (namespaces)"
    # A state directory of our own: `down` must not end another session's `ethlab up` on this shared machine.
    env = {**os.environ, "ETHLAB_STATE_DIR": str(tmp_path / "state"), "COLUMNS": "200"}
    up = subprocess.Popen([sys.executable, "-m", "ethlab.cli", "up", "line", "--n", "2", "--sample", "1"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)
    try:
        out: list[str] = []
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            line = up.stdout.readline() if up.stdout else ""
            if not line:
                break
            out.append(line)
            if "fabric running" in line:
                break
        assert any("fabric running" in ln for ln in out), "".join(out) + (up.stderr.read() if up.stderr else "")
        t0 = time.monotonic()
        down = subprocess.run([sys.executable, "-m", "ethlab.cli", "down"], capture_output=True, text=True,
                              cwd=ROOT, env=env, timeout=240)
        assert down.returncode == 0 and "ended 1 `ethlab up`" in down.stdout, down.stdout + down.stderr
        rest, err = up.communicate(timeout=60)
        assert up.returncode == 0, err
        assert "torn down in" in rest, rest
        # the watcher stopped before the switches went: no liveness complaints
        assert "Traceback" not in err and "not answering" not in err.lower() and "dead" not in err.lower(), err
        assert time.monotonic() - t0 < 240
        assert not list((tmp_path / "state").glob("*.json"))  # nothing left to clean
    finally:
        if up.poll() is None:
            up.terminate()
            up.wait(120)
