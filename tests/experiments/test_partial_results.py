"""A switch killed from outside (kill -9) while `ethlab traffic run` replays on a small fabric: the run
still writes command.json, metrics.json, flows.csv, links.csv and switch.json for what could be read, prints
its tables and one line naming the crash, exits 1, and shows no traceback."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.netns, pytest.mark.timeout(300)]

REPO = Path(__file__).resolve().parents[2]


def switch_pid(log_dir: Path, name: str) -> int | None:
    """The pid of the p4exec switch process whose log goes to log_dir (found by its command line)."""
    want = str(log_dir / f"{name}.log")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"p4exec.switch" in argv and want.encode() in argv:
            return int(entry.name)
    return None


def test_switch_killed_mid_traffic_run_keeps_what_can_be_read(tmp_path: Path) -> None:
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "ethlab.cli", "traffic", "run", "all_reduce", "--topo", "leafspine",
           "--size", "512KiB", "--iterations", "3", "--rate-mbps", "10", "--sample", "0.1", "--out", str(out)]
    env = {**os.environ, "COLUMNS": "200"}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, env=env)
    try:
        deadline = time.monotonic() + 180
        while not (out / "bringup.json").exists():  # written when the replay is about to start
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the fabric did not come up"
            time.sleep(0.1)
        time.sleep(1.0)  # the replay takes ~2.3 s
        pid = switch_pid(out / "switch-logs", "spine2")
        assert pid is not None, "spine2's process"
        os.kill(pid, signal.SIGKILL)
        stdout, stderr = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    text = stdout + stderr
    assert "Traceback" not in text, text
    assert proc.returncode == 1, text
    assert "a switch crashed: spine2 exited with status -9" in text
    for name in ("command.json", "metrics.json", "flows.csv", "links.csv", "switch.json"):
        assert (out / name).exists(), name
    assert json.loads((out / "command.json").read_text())["pattern"] == "all_reduce"
    sw = json.loads((out / "switch.json").read_text())
    assert set(sw["crashed"]) == {"spine2"} and "spine2" in sw["unread"]
    assert {r["switch"] for r in sw["links"]} == {"leaf1", "leaf2", "spine1"}
    assert "all_reduce on leafspine" in text  # the results table
    assert "leaf1" in text and "spine1" in text  # the links table
