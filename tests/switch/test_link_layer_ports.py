"""`p4exec switch --link-layer JSON --link-layer-ports P ...`: the link layer on some ports only."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from p4exec.switch.lab import Lab, SwitchProcess, switch_env

LLR = json.dumps({"llr": True})


def test_an_unknown_port_is_refused_with_the_ports_there_are(lab: Lab) -> None:
    got = subprocess.run(lab.switch_cmd("--no-grpc", "--no-p4", "--link-layer", LLR, "--link-layer-ports", "7"),
                         capture_output=True, text=True, timeout=60, env=switch_env())
    assert got.returncode == 2
    assert "--link-layer-ports: no such port 7 (ports: 1, 2)" in got.stderr
    assert "Traceback" not in got.stderr


def test_only_the_given_ports_run_the_link_layer(lab: Lab, tmp_path: Path) -> None:
    stats = tmp_path / "stats.json"
    sw = SwitchProcess(lab.switch_cmd("--no-grpc", "--no-p4", "--stats-file", str(stats), "--link-layer", LLR,
                                      "--link-layer-ports", "2"))
    try:
        sw.wait_ready()
    finally:
        sw.close()  # SIGTERM: the stats file is written on the way out
    assert sorted(json.loads(stats.read_text())["link_layer"]) == ["2"]
