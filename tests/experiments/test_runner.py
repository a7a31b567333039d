"""Experiments end to end on real leaf/spine fabrics of p4exec switches: result files, plots and consistent
metrics; reruns with the same seed reproduce the schedule exactly and the metrics within the documented
tolerance; a link failure is survived under every policy; a failing run keeps what it collected."""

from __future__ import annotations

import csv
import json
import re

import pytest

from ethlab.cli import main
from ethlab.experiment.spec import load_spec, parse_spec

pytestmark = [pytest.mark.netns, pytest.mark.timeout(300)]

# docs/experiments.md, "Reproducibility": the ratio of a rerun's per-policy mean to the first run's, for the
# timing metrics, stays within a factor of 3 on this shared 2-core machine (counts are exact).
TOLERANCE = {"time_ms": 3.0, "busbw_MBps": 3.0}


def tiny(**over):
    spec = {"name": "tiny", "topology": {"name": "leafspine"}, "seed": 7, "repetitions": 1,
            "fabric": {"rate_scale": 2e-3, "queue_depth": 64}, "engine": {"rate_mbps": 10, "loss_grace_s": 0.5},
            "traffic": {"pattern": "all_reduce", "algorithm": "ring", "size": "64KiB", "iterations": 2},
            "policies": [{"name": "ecmp"}, {"name": "spray"}], "sample_interval_s": 0.1}
    spec.update(over)
    return spec


def _write(tmp_path, spec, name="spec.yaml"):
    import yaml

    path = tmp_path / name
    path.write_text(yaml.safe_dump(spec))
    return path


def test_tiny_experiment_end_to_end(tmp_path, capsys):
    out = tmp_path / "res"
    spec = tiny(expect="two spines:\n  spray spreads evenly")
    assert main(["run", str(_write(tmp_path, spec)), "--out", str(out)]) == 0
    assert "what to look for: two spines: spray spreads evenly" in capsys.readouterr().out
    for name in ("spec.yaml", "versions.json", "schedule.json", "status.json", "summary.json", "trials.csv",
                 "comparison.csv"):
        assert (out / name).stat().st_size > 0, name
    for plot in ("completion_cdf", "busbw", "link_utilisation", "queue", "ecn"):
        png = out / "plots" / f"{plot}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size < 300_000
    summary = json.loads((out / "summary.json").read_text())
    assert summary["state"] == "complete" and [p["policy"] for p in summary["policies"]] == ["ecmp", "spray"]
    versions = json.loads((out / "versions.json").read_text())
    assert versions["target"] == "p4exec" and versions["ethlab"]
    report = (out / "report.md").read_text()
    assert "**state:** complete (2 of 2 trials)" in report and "leafspine" in report
    assert "**What to look for:** two spines: spray spreads evenly" in report
    for p in summary["policies"]:  # the comparison rows carry the summary's medians
        assert f"| {p['policy']} | 1 | {p['time_ms']:.2f} |" in report
    images = re.findall(r"!\[[^]]*\]\(([^)]+)\)", report)
    assert len(images) >= 5 and all((out / img).exists() for img in images)
    for label in ("ecmp", "spray"):
        trial = out / "runs" / label / "rep0"
        assert any((trial / "switch-logs").glob("*.log"))
        metrics = json.loads((trial / "metrics.json").read_text())
        assert len(metrics["records"]) == 2
        for rec in metrics["records"]:
            assert rec["complete"]
            assert rec["packets_delivered"] == rec["packets_sent"] - rec["packets_lost"]
            assert rec["bytes_delivered"] == rec["bytes_scheduled"] - 0  # no loss: every byte arrived
            assert rec["busbw_GBps"] == pytest.approx(rec["algbw_GBps"] * 2 * 3 / 4, rel=1e-6)
        links = list(csv.DictReader((trial / "links.csv").open()))
        to_hosts = sum(int(r["tx_packets"]) for r in links if r["peer"].startswith("h"))
        assert to_hosts >= metrics["summary"]["packets_delivered"]


def test_rerun_same_seed_reproduces(tmp_path):
    spec = tiny(policies=[{"name": "spray"}])
    path = _write(tmp_path, spec)
    assert load_spec(path).plan(load_spec(path).build_topology())  # the plan is a pure function of the spec
    runs = []
    for i in range(2):
        out = tmp_path / f"run{i}"
        assert main(["run", str(path), "--out", str(out)]) == 0
        runs.append(json.loads((out / "summary.json").read_text()))
    assert runs[0]["schedule"] == runs[1]["schedule"]
    a, b = (r["policies"][0] for r in runs)
    assert a["packets_lost"] == b["packets_lost"] == 0
    ta, tb = (r["trials"][0] for r in runs)
    assert ta["packets_sent"] == tb["packets_sent"] and ta["seed"] == tb["seed"]
    for key, factor in TOLERANCE.items():
        assert 1 / factor <= b[key] / a[key] <= factor, (key, a[key], b[key])
    assert main(["compare", str(tmp_path / "run0"), str(tmp_path / "run1")]) == 0
    # a different seed changes the all-to-all schedule (seeded skew), the same seed never does
    s1 = parse_spec({**tiny(), "traffic": {"pattern": "all_to_all", "size": "32KiB", "params": {"skew": 1.0}}})
    s2 = parse_spec({**tiny(seed=8), "traffic": {"pattern": "all_to_all", "size": "32KiB", "params": {"skew": 1.0}}})
    from ethlab.experiment.spec import schedule_digest

    topo = s1.build_topology()
    assert schedule_digest(s1.plan(topo)) == schedule_digest(s1.plan(topo))
    assert schedule_digest(s1.plan(topo)) != schedule_digest(s2.plan(topo))


def test_link_failure_recovers_under_each_policy(tmp_path):
    spec = tiny(traffic={"pattern": "all_reduce", "algorithm": "ring", "size": "64KiB", "iterations": 6},
                policies=[{"name": p} for p in ("ecmp", "spray", "flowlet", "adaptive")],
                faults=[{"at_s": 0.25, "action": "link_down", "a": "leaf1", "b": "spine1"}])
    out = tmp_path / "res"
    main(["run", str(_write(tmp_path, spec)), "--out", str(out)])
    summary = json.loads((out / "summary.json").read_text())
    assert summary["state"] == "complete"
    for label in ("ecmp", "spray", "flowlet", "adaptive"):
        trial = out / "runs" / label / "rep0"
        sw = json.loads((trial / "switch.json").read_text())
        (event,) = sw["faults"]
        assert event["action"] == "link_down" and event["error"] is None
        (rec,) = sw["recovery"]
        assert rec["recovery_s"] is not None and rec["recovery_s"] < 2.0
        records = json.loads((trial / "metrics.json").read_text())["records"]
        assert len(records) == 6
        # the iterations that start after the failure run on the remaining spine with no loss
        assert records[-1]["complete"] and records[-1]["packets_lost"] == 0
        dead = [r for r in sw["links"] if (r["switch"], r["peer"].split(":")[0]) in
                {("leaf1", "spine1"), ("spine1", "leaf1")}]
        alive = [r for r in sw["links"] if (r["switch"], r["peer"].split(":")[0]) in
                 {("leaf1", "spine2"), ("spine2", "leaf1")}]
        assert sum(r["tx_packets"] for r in alive) > sum(r["tx_packets"] for r in dead)
    assert (out / "plots" / "faults_goodput.png").exists()
    report = (out / "report.md").read_text()
    assert "## Faults" in report and report.count("| link_down | leaf1-spine1 |") == 4


def test_bad_engine_value_fails_before_any_fabric(tmp_path, capsys):
    spec = tiny(policies=[{"name": "ecmp"}, {"label": "broken", "name": "spray", "engine": {"format": "nope"}}])
    out = tmp_path / "res"
    assert main(["run", str(_write(tmp_path, spec)), "--out", str(out)]) == 2
    assert not out.exists()  # nothing ran
    err = capsys.readouterr().err
    assert "policies[broken]" in err and "nope" in err and "Traceback" not in err


def test_failing_run_keeps_partial_results(tmp_path):
    """A switch killed mid-trial (SIGKILL): the trial fails, and keeps the engine's files, links.csv and
    switch.json for the switches still readable; the run's report says how far it got."""
    spec = tiny(policies=[{"name": "ecmp"}], traffic={"pattern": "all_reduce", "algorithm": "ring",
                                                      "size": "512KiB", "iterations": 3},
                faults=[{"at_s": 0.3, "action": "switch_kill", "switch": "spine2"}])
    out = tmp_path / "res"
    assert main(["run", str(_write(tmp_path, spec)), "--out", str(out)]) == 1
    status = json.loads((out / "status.json").read_text())
    assert status["state"] == "failed" and status["trials_done"] == 0 and status["current"] == "ecmp rep 0"
    error = (out / "error.txt").read_text()
    assert "ecmp rep 0" in error and "spine2 exited" in error
    trial = out / "runs" / "ecmp" / "rep0"
    for name in ("metrics.json", "flows.csv", "links.csv", "switch.json", "bringup.json"):
        assert (trial / name).exists(), name
    sw = json.loads((trial / "switch.json").read_text())
    assert set(sw["crashed"]) == {"spine2"} and "spine2" in sw["unread"]
    assert {r["switch"] for r in sw["links"]} == {"leaf1", "leaf2", "spine1"}  # all but the dead one
    assert sum(r["tx_packets"] for r in sw["links"]) > 0
    assert [f["action"] for f in sw["faults"]] == ["switch_kill"] and sw["faults"][0]["error"] is None
    rows = list(csv.DictReader((trial / "links.csv").open()))
    assert len(rows) == len(sw["links"])
    assert json.loads((out / "summary.json").read_text())["state"] == "failed"
    report = (out / "report.md").read_text()  # the page says how far it got
    assert "**state:** failed (0 of 1 trials)" in report and "ecmp rep 0" in report
    (out / "report.md").unlink()
    assert main(["report", str(out)]) == 0 and (out / "report.md").read_text() == report
    assert main(["report", str(tmp_path)]) == 1  # not a results directory


def test_spec_errors_name_the_key(tmp_path):
    bad = tiny(policies=[{"name": "nosuch"}])
    with pytest.raises(ValueError, match=r"policies\[0\]\.name"):
        parse_spec(bad)
    with pytest.raises(ValueError, match=r"faults\[0\].*no link"):
        parse_spec(tiny(faults=[{"at_s": 1, "action": "link_down", "a": "h1", "b": "spine1"}]))
    with pytest.raises(ValueError, match="traffic"):
        parse_spec(tiny(traffic={"pattern": "all_reduce"}))
    assert main(["run", str(_write(tmp_path, {"name": "x"}))]) == 2


def test_slow_link_and_switch_stop_faults_apply_and_undo(tmp_path):
    spec = tiny(policies=[{"name": "ecmp"}],
                traffic={"pattern": "all_reduce", "algorithm": "ring", "size": "192KiB", "iterations": 4},
                faults=[{"at_s": 0.2, "action": "slow_link", "a": "leaf1", "b": "spine1", "rate_factor": 0.2,
                         "for_s": 0.3},
                        {"at_s": 0.6, "action": "switch_stop", "switch": "spine2", "for_s": 0.3}])
    out = tmp_path / "res"
    main(["run", str(_write(tmp_path, spec)), "--out", str(out)])
    assert json.loads((out / "summary.json").read_text())["state"] == "complete"
    sw = json.loads((out / "runs" / "ecmp" / "rep0" / "switch.json").read_text())
    actions = sorted(e["action"] for e in sw["faults"])
    assert actions == ["restore_link", "slow_link", "switch_restart", "switch_stop"]
    assert all(e["error"] is None for e in sw["faults"])
    assert {r["fault"] for r in sw["recovery"]} == {"slow_link", "switch_stop"}
    records = json.loads((out / "runs" / "ecmp" / "rep0" / "metrics.json").read_text())["records"]
    # after the switch is resumed the fabric forwards again: the last iteration is whole
    assert records[-1]["complete"] and records[-1]["packets_lost"] == 0


def test_controller_restart_keeps_forwarding(tmp_path):
    spec = tiny(policies=[{"name": "ecmp"}],
                traffic={"pattern": "all_reduce", "algorithm": "ring", "size": "192KiB", "iterations": 3},
                faults=[{"at_s": 0.2, "action": "controller_stop", "for_s": 0.4}])
    out = tmp_path / "res"
    assert main(["run", str(_write(tmp_path, spec)), "--out", str(out)]) == 0
    trial = out / "runs" / "ecmp" / "rep0"
    sw = json.loads((trial / "switch.json").read_text())
    assert [e["action"] for e in sw["faults"]] == ["controller_stop", "controller_restart"]
    assert all(e["error"] is None for e in sw["faults"])
    summary = json.loads((trial / "metrics.json").read_text())["summary"]
    assert summary["complete"] and summary["packets_lost"] == 0  # the data plane forwards headless
    assert sw["links"]  # counters read after the restart: the new incarnation owns the switches
