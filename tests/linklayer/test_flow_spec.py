"""PFC and CBFC through an experiment spec: bad settings refused at load naming the key (also per variant), the
records carry the pause/credit counters (metrics.json totals, links.csv columns per switch port), and reruns
are byte-identical in virtual time."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from ethlab.experiment.spec import SpecError, parse_spec
from tests.support.reruns import records_of_two_runs

BASE = {"name": "fc-spec", "topology": {"name": "erack", "params": {"gpus": 5, "planes": 1, "radix": 8,
                                                                     "rate_gbps": 100}},
        "traffic": {"pattern": "incast", "size": "192KiB"}, "clock": "virtual", "target": "p4exec",
        "fabric": {"queue_depth": 32}, "virtual": {"time_limit_s": 0.01},
        "policies": [{"label": "pfc", "name": "ecmp",
                      "link_layer": {"flow_control": "pfc", "pfc": {"xoff_bytes": 20000, "xon_bytes": 10000,
                                                                    "headroom_bytes": 40000}}},
                     {"label": "cbfc", "name": "ecmp",
                      "link_layer": {"flow_control": "cbfc", "cbfc": {"credits": 128}}}]}


@pytest.mark.parametrize(("variant", "key"), [
    ({"flow_control": "pfc", "pfc": {"xoff_bytes": 1000, "xon_bytes": 2000}}, "policies[x].link_layer.pfc.xon_bytes"),
    ({"flow_control": "cbfc", "cbfc": {"cell_bytes": 64, "credits": 10}}, "policies[x].link_layer.cbfc.credits"),
    ({"flow_control": "cbfc", "cbfc": {"vc_map": [0, 1]}}, "policies[x].link_layer.cbfc.vc_map"),
    ({"flow_control": "pfc", "pfc": {"priorities": [9]}}, "policies[x].link_layer.pfc.priorities"),
    ({"flow_control": "pfc", "pfc": {"watchdog_ns": -1}}, "policies[x].link_layer.pfc.watchdog_ns"),
])
def test_bad_flow_control_in_a_variant_is_refused_naming_the_key(variant: dict, key: str) -> None:
    with pytest.raises(SpecError) as err:
        parse_spec({**BASE, "policies": [{"label": "x", "name": "ecmp", "link_layer": variant}]})
    assert str(err.value).startswith(key), str(err.value)


def test_pfc_and_cbfc_records_and_identical_reruns(tmp_path: Path) -> None:
    spec = parse_spec(BASE)
    runs = records_of_two_runs(spec, tmp_path)
    assert runs[0] == runs[1] and len(runs[0]) == 6
    root = tmp_path / "0"
    pfc = json.loads((root / "runs/pfc/rep0/metrics.json").read_text())["summary"]
    cbfc = json.loads((root / "runs/cbfc/rep0/metrics.json").read_text())["summary"]
    for s in (pfc, cbfc):
        assert s["complete"] and s["packets_lost"] == 0 and s["link_layer"]["buffer_drops"] == 0
    assert pfc["link_layer"]["pause_frames"] > 0 and pfc["link_layer"]["paused_ns"] > 0
    assert cbfc["link_layer"]["credit_stall_ns"] > 0 and cbfc["link_layer"]["pause_frames"] == 0
    rows = list(csv.DictReader((root / "runs/pfc/rep0/links.csv").open()))
    assert sum(int(r["pause_tx"]) for r in rows) > 0 and "buffer_drops" in rows[0]
    rows = list(csv.DictReader((root / "runs/cbfc/rep0/links.csv").open()))
    assert sum(int(r["control_tx"]) for r in rows) > 0  # credit updates from the switch ports
