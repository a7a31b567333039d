"""Experiments on BMv2 run paced (controller/targets.py `max_flow_rate_mbps`, ethlab/experiment/runner.py
`paced`): above that per-flow rate simple_switch_grpc loses frames between the veth and its pipeline, where no
P4 counter sees them (docs/experiments.md, BMv2 section). Paced, a small healthy BMv2 fabric loses nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from controller.targets import BMV2, P4EXEC
from ethlab.cli import main
from ethlab.experiment.runner import paced
from ethlab.experiment.spec import parse_spec
from tests.support.bmv2 import MISSING, REASON

SPEC: dict[str, Any] = {"name": "bmv2-paced", "topology": {"name": "leafspine"}, "target": "bmv2", "seed": 3, "repetitions": 1,
        "fabric": {"rate_scale": 2e-3, "queue_depth": 64},
        "engine": {"rate_mbps": 10, "loss_grace_s": 0.5, "time_limit_s": 30},
        "traffic": {"pattern": "all_reduce", "algorithm": "ring", "size": "64KiB", "iterations": 2},
        "policies": [{"name": "ecmp"}], "sample_interval_s": 0.2}


def _spec(**over: object):
    return parse_spec({**SPEC, **over})


def test_bmv2_flows_above_the_cap_slow_the_whole_fabric_down_together() -> None:
    spec = _spec()
    assert BMV2.max_flow_rate_mbps is not None and P4EXEC.max_flow_rate_mbps is None
    engine, rate_scale, factor = paced(spec, spec.engine_config(spec.variants[0]), 2e-3)
    assert factor == pytest.approx(BMV2.max_flow_rate_mbps / 10)
    assert engine.flow_rate_bps == pytest.approx(BMV2.max_flow_rate_mbps * 1e6)
    assert rate_scale == pytest.approx(2e-3 * factor)  # queues keep their load ratio
    assert engine.time_limit_ns == pytest.approx(30e9 / factor)
    slow = _spec(engine={**SPEC["engine"], "rate_mbps": BMV2.max_flow_rate_mbps / 2})
    assert paced(slow, slow.engine_config(slow.variants[0]), 2e-3)[2] == 1.0  # under the cap: as specified
    on_p4exec = _spec(target="p4exec")
    assert paced(on_p4exec, on_p4exec.engine_config(on_p4exec.variants[0]), 2e-3)[2] == 1.0


@pytest.mark.netns
@pytest.mark.bmv2
@pytest.mark.skipif(bool(MISSING), reason=REASON)
@pytest.mark.timeout(600)
def test_paced_healthy_bmv2_fabric_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(SPEC))
    out = tmp_path / "res"
    assert main(["run", str(path), "--out", str(out)]) == 0
    assert json.loads((out / "versions.json").read_text())["max_flow_rate_mbps"] == BMV2.max_flow_rate_mbps
    metrics = json.loads((out / "runs" / "ecmp" / "rep0" / "metrics.json").read_text())
    assert len(metrics["records"]) == 2
    for rec in metrics["records"]:
        assert rec["packets_sent"] > 0
        assert rec["packets_lost"] == 0 and rec["complete"], rec
    switch = json.loads((out / "runs" / "ecmp" / "rep0" / "switch.json").read_text())
    assert not any(n for per in switch.get("drops", {}).values() for n in per.values()), switch.get("drops")

