"""`clock: virtual` in experiment specs: bad clock or options are rejected when the spec loads, naming the
key; `ethlab run --clock virtual` runs a spec end to end and keeps the usual results layout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from ethlab.experiment.runner import run_experiment
from ethlab.experiment.spec import SpecError, parse_spec

BASE = {"name": "vt-spec", "topology": {"name": "leafspine"}, "traffic": {"pattern": "all_reduce", "size": "32KiB"},
        "policies": [{"name": "ecmp"}, {"name": "spray"}]}


@pytest.mark.parametrize(("extra", "message"), [
    ({"clock": "quantum"}, "clock: must be one of emulated, virtual"),
    ({"clock": "virtual", "virtual": {"time_limit_s": 0}}, "virtual.time_limit_s"),
    ({"clock": "virtual", "virtual": {"wall_limit_s": -3}}, "virtual.wall_limit_s"),
    ({"clock": "virtual", "virtual": {"control_delay_s": "soon"}}, "virtual.control_delay_s"),
    ({"clock": "virtual", "virtual": {"warp": 9}}, "unknown key(s) warp"),
    ({"clock": "virtual", "virtual": {None: None, 7: 1}}, "unknown key(s) 7, None"),  # YAML `null:` / `7:` keys
    ({"clock": "virtual", "virtual": [1, 2]}, "virtual: must be a mapping"),
    ({"clock": "virtual", "virtual": {"queue_depth": 0}}, "virtual.queue_depth"),
])
def test_bad_clock_options_name_the_key(extra: dict, message: str) -> None:
    with pytest.raises(SpecError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_spec({**BASE, **extra})


def test_virtual_experiment_runs_and_states_the_clock(tmp_path: Path) -> None:
    spec = parse_spec({**BASE, "clock": "virtual", "virtual": {"time_limit_s": 0.01}, "repetitions": 2})
    out = run_experiment(spec, tmp_path, plots=False)
    assert out.state == "complete", out.error
    assert len(out.rows) == 4 and all(r["complete"] for r in out.rows)
    resolved = yaml.safe_load((tmp_path / "spec.yaml").read_text())
    assert resolved["clock"] == "virtual"
    for policy in ("ecmp", "spray"):
        reps = [(tmp_path / "runs" / policy / f"rep{i}" / "metrics.json").read_bytes() for i in range(2)]
        summary = json.loads(reps[0])["summary"]
        assert summary["clock"] == "virtual" and summary["stopped_by"] == "completed"
        assert summary["packets_lost"] == 0
    assert "**clock:** virtual" in (tmp_path / "report.md").read_text()


def test_virtual_time_limit_is_reported_and_results_kept(tmp_path: Path) -> None:
    spec = parse_spec({**BASE, "clock": "virtual", "virtual": {"time_limit_s": 5e-6}})
    out = run_experiment(spec, tmp_path, plots=False)
    run = tmp_path / "runs" / "ecmp" / "rep0"
    summary = json.loads((run / "metrics.json").read_text())["summary"]
    assert summary["stopped_by"] == "virtual_time_limit" and summary["complete"] is False and summary["timed_out"] is True
    switch = json.loads((run / "switch.json").read_text())
    assert switch["virtual"]["stopped_by"] == "virtual_time_limit" and (run / "links.csv").exists()
    assert out.state == "complete"  # an incomplete trial is a result, not a crash
