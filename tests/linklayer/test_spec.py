"""`link_layer` in experiment specs: checked at load naming the key, refused on BMv2, carried into the records
(metrics.json, links.csv, summary.json, report.md) only when on, and reruns byte-identical."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from ethlab.experiment.runner import run_experiment
from ethlab.experiment.spec import SpecError, check_link_layer_target, parse_spec
from tests.support.reruns import records_of_two_runs

BASE = {"name": "ll-spec", "topology": {"name": "erack", "params": {"gpus": 4, "planes": 1, "radix": 4}},
        "traffic": {"pattern": "all_reduce", "algorithm": "ring", "size": "256KiB"}, "clock": "virtual",
        "target": "p4exec", "fabric": {"queue_depth": 512}, "virtual": {"time_limit_s": 0.01},
        "link_layer": {"frame_error_rate": 1e-3},
        "policies": [{"label": "off", "name": "ecmp"},
                     {"label": "llr", "name": "ecmp", "link_layer": {"llr": {"ack_every": 8}}}]}


@pytest.mark.parametrize(("change", "key"), [
    ({"link_layer": {"frame_error_rate": -1e-3}}, "link_layer.frame_error_rate"),
    ({"link_layer": {"frame_error_rate": 1.5}}, "link_layer.frame_error_rate"),
    ({"link_layer": {"flow_control": "xonxoff"}}, "link_layer.flow_control"),
    ({"link_layer": {"llr": {"ack_every": 0}}}, "link_layer.llr.ack_every"),
    ({"link_layer": {"flow_control": "cbfc", "cbfc": {"credits": 2}}}, "link_layer.cbfc.credits"),
    ({"link_layer": {"pfc": {"xoff_bytes": 1000, "xon_bytes": 5000}}}, "link_layer.pfc.xon_bytes"),
    ({"link_layer": {"fer": 0.1}}, "link_layer: unknown key(s) fer"),
    ({"link_layer": {None: 1, 2: 0}}, "link_layer: unknown key(s) 2, None"),  # YAML `null:` / `2:` keys
    ({"link_layer": [1]}, "link_layer: must be a mapping"),
    ({"policies": [{"name": "ecmp", "link_layer": {"frame_error_rate": 2}}]},
     "policies[ecmp].link_layer.frame_error_rate"),
    ({"policies": [{"name": "ecmp", "link_layer": {"llr": "maybe"}}]}, "policies[ecmp].link_layer.llr"),
    ({"policies": [{"name": "ecmp", "link_layer": 3}]}, "policies[0].link_layer: must be a mapping"),
    ({"target": "bmv2", "clock": "emulated"}, "link_layer: frame errors, LLR, PFC and CBFC"),
])
def test_bad_link_layer_is_refused_naming_the_key(change: dict, key: str) -> None:
    with pytest.raises(SpecError) as err:
        parse_spec({**BASE, **change})
    assert str(err.value).startswith(key), str(err.value)


def test_target_override_to_bmv2_is_refused() -> None:
    spec = parse_spec(BASE)
    spec.target = "bmv2"
    with pytest.raises(SpecError, match="below what BMv2 models"):
        check_link_layer_target(spec)
    spec = parse_spec({**BASE, "link_layer": {}, "policies": [{"name": "ecmp"}]})
    spec.target = "bmv2"
    check_link_layer_target(spec)  # nothing asked: fine


def test_variant_merges_over_the_top_level() -> None:
    spec = parse_spec({**BASE, "link_layer": {"frame_error_rate": 1e-4, "llr": {"ack_every": 4}},
                       "policies": [{"label": "a", "name": "ecmp"},
                                    {"label": "b", "name": "ecmp", "link_layer": {"llr": False}},
                                    {"label": "c", "name": "ecmp", "link_layer": {"llr": {"max_replays": 2}}}]})
    a, b, c = (spec.link_layer_config(v) for v in spec.variants)
    assert a.llr.enabled and a.llr.ack_every == 4 and a.frame_error_rate == 1e-4
    assert not b.llr.enabled and b.frame_error_rate == 1e-4
    assert c.llr.enabled and c.llr.ack_every == 4 and c.llr.max_replays == 2


def test_records_carry_the_link_layer_and_reruns_are_identical(tmp_path: Path) -> None:
    spec = parse_spec(BASE)
    runs = records_of_two_runs(spec, tmp_path)
    assert runs[0] == runs[1]
    root = tmp_path / "0"
    off = json.loads((root / "runs/off/rep0/metrics.json").read_text())["summary"]
    on = json.loads((root / "runs/llr/rep0/metrics.json").read_text())["summary"]
    assert off["link_layer"]["frames_corrupted"] > 0 and off["packets_lost"] == off["link_layer"]["frames_corrupted"]
    assert on["link_layer"]["llr_replays"] > 0 and on["packets_lost"] == 0 and on["link_layer"]["llr"] is True
    for key in ("frames_corrupted", "llr_replays", "llr_discards", "pause_frames", "paused_ns", "credit_stall_ns",
                "buffer_drops"):
        assert key in on["link_layer"]
    rows = list(csv.DictReader((root / "runs/llr/rep0/links.csv").open()))
    assert sum(int(r["llr_tx_replay"]) for r in rows) > 0 and "rx_bad" in rows[0]
    summary = json.loads((root / "summary.json").read_text())
    assert [p["link_layer"]["llr"] for p in summary["policies"]] == [False, True]
    report = (root / "report.md").read_text()
    assert "## Link layer" in report and "| llr | 0.001 | 0 | on | none |" in report


def test_without_link_layer_files_have_no_new_columns(tmp_path: Path) -> None:
    spec = parse_spec({**BASE, "link_layer": {}, "policies": [{"name": "ecmp"}]})
    run_experiment(spec, tmp_path, plots=False)
    assert "link_layer" not in json.loads((tmp_path / "runs/ecmp/rep0/metrics.json").read_text())["summary"]
    head = (tmp_path / "runs/ecmp/rep0/links.csv").read_text().splitlines()[0]
    assert head == "switch,port,peer,plane,tx_packets,tx_bytes,utilisation,ecn_marked,qdepth_max"
    assert "## Link layer" not in (tmp_path / "report.md").read_text()


@pytest.mark.parametrize(("flags", "words"), [
    (["--frame-error-rate", "2"], ("--frame-error-rate", "link_layer.frame_error_rate")),
    (["--bit-error-rate", "-1e-9"], ("--bit-error-rate",)),
    (["--llr-param", "ack_every=0"], ("--llr-param", "link_layer.llr.ack_every")),
    (["--flow-control", "cbfc", "--cbfc-param", "credits=1"], ("--cbfc-param", "link_layer.cbfc.credits")),
    (["--flow-control", "pfc", "--pfc-param", "xon_bytes=999999"], ("--pfc-param", "xon_bytes")),
    (["--llr", "--target", "bmv2"], ("--target bmv2", "below what BMv2 models")),
])
def test_traffic_run_flags_are_checked(flags: list[str], words: tuple[str, ...],
                                       capsys: pytest.CaptureFixture[str]) -> None:
    from tests.experiments.test_cli_input import assert_refused, run_cli

    code, text = run_cli(["traffic", "run", "all_reduce", "--topo", "leafspine", "--out", "/nonexistent/x",
                          "--dry-run", *flags], capsys)
    assert_refused(code, text, *words)


def test_run_target_bmv2_override_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import yaml

    from tests.experiments.test_cli_input import assert_refused, run_cli

    spec = tmp_path / "ll.yaml"
    spec.write_text(yaml.safe_dump(BASE))
    code, text = run_cli(["run", str(spec), "--target", "bmv2", "--dry-run"], capsys)
    assert_refused(code, text, "link_layer", "below what BMv2 models")
