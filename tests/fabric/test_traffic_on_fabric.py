"""Collectives replayed on a real leaf/spine fabric of p4exec switches running p4src/ethplus.p4: the engine's
metrics agree with themselves (nccl-tests formulas, bytes delivered = sent − lost) and with the switches'
own counters; an incast into a small queue gets ECN marks, and DCQCN-like senders lose less."""

from __future__ import annotations

import json

import pytest

from controller.policies import make_policy
from ethlab.experiment.emulated import run_emulated_trial
from ethlab.experiment.trial import TrialSetup
from topologies.yaml_loader import load as load_topology
from traffic.records import DEFAULT_BURST, HostConfig, ns
from traffic.replay import pattern_plan

pytestmark = [pytest.mark.netns, pytest.mark.timeout(180)]

PAYLOAD = 1500 - 44  # RoCEv2 payload per frame at MTU 1500


def _run(tmp_path, pattern, size, policy="ecmp", reaction="none", rate_mbps=20.0, **kw):
    topo = load_topology("leafspine")
    eids = sorted(ep.eid for ep in topo.endpoints.values())
    params = kw.pop("params", {})
    plan = pattern_plan(pattern, eids, size, **params)
    engine = HostConfig(flow_rate_bps=rate_mbps * 1e6, reaction=reaction, time_limit_ns=ns(30), loss_grace_ns=ns(0.5),
                          reaction_params=kw.pop("reaction_params", {}), catch_up_frames=DEFAULT_BURST)
    setup = TrialSetup(topo, make_policy(policy, ecn=kw.pop("ecn", True)), plan, engine, seed=1, **kw)
    return topo, run_emulated_trial(setup, tmp_path)


def _host_ports_tx(topo, links):
    return sum(r["tx_packets"] for r in links if not topo.nodes[r["peer"].split(":")[0]].is_switch)


def _consistent(rec):
    assert rec["packets_delivered"] == rec["packets_sent"] - rec["packets_lost"]
    assert rec["bytes_delivered"] <= rec["bytes_scheduled"]
    if rec["packets_lost"] == 0:
        assert rec["bytes_delivered"] == rec["bytes_scheduled"]


def test_ring_all_reduce_no_loss_and_metrics(tmp_path):
    size = 192 * 1024
    topo, res = _run(tmp_path, "all_reduce", size, params={"algorithm": "ring", "iterations": 2})
    recs = res.metrics.records
    assert [r["iteration"] for r in recs] == [0, 1]
    n = 4
    for rec in recs:
        assert rec["complete"] and rec["packets_lost"] == 0 and rec["duplicates"] == 0
        _consistent(rec)
        # ring all-reduce puts 2(n-1)/n x size on the wire per rank
        assert rec["bytes_scheduled"] == 2 * (n - 1) * size
        algbw = size / rec["time_s"] / 1e9
        assert rec["algbw_GBps"] == pytest.approx(algbw, rel=1e-6)
        assert rec["busbw_GBps"] == pytest.approx(algbw * 2 * (n - 1) / n, rel=1e-6)
    # every delivered frame left a leaf towards a host: the switches' counters agree with the receivers
    delivered = sum(r["packets_delivered"] for r in recs)
    assert delivered <= _host_ports_tx(topo, res.links) <= delivered + 25 * len(topo.hosts)
    assert res.switch["summary"]["switch_drops"] == 0
    files = {p.name for p in tmp_path.iterdir()}
    assert {"metrics.json", "metrics.csv", "flows.csv", "links.csv", "switch.json", "switch-logs"} <= files
    assert json.loads((tmp_path / "metrics.json").read_text())["records"] == recs


def test_all_to_all_no_loss_and_busbw(tmp_path):
    size = 96 * 1024
    topo, res = _run(tmp_path, "all_to_all", size, policy="spray")
    (rec,) = res.metrics.records
    n = 4
    assert rec["complete"] and rec["packets_lost"] == 0
    _consistent(rec)
    assert rec["bytes_scheduled"] == pytest.approx((n - 1) * size, abs=n * n)
    assert rec["busbw_GBps"] == pytest.approx(rec["algbw_GBps"] * (n - 1) / n, rel=1e-6)
    delivered = rec["packets_delivered"]
    assert delivered <= _host_ports_tx(topo, res.links) <= delivered + 25 * len(topo.hosts)
    # spray spreads the cross-leaf packets over both spines
    spine_tx = {r["switch"]: r["tx_packets"] for r in res.links if r["switch"].startswith("spine")}
    by_spine = {}
    for sw, pk in spine_tx.items():
        by_spine[sw] = by_spine.get(sw, 0) + pk
    assert min(by_spine.values()) > 0.3 * max(by_spine.values())


INCAST = dict(rate_scale=2e-3, queue_depth=40, ecn={"kmin": 2, "kmax": 20, "pmax": 0.5},
              params={"sink": 1}, rate_mbps=15.0)


def test_incast_small_queue_marks_ecn_and_dcqcn_loses_less(tmp_path):
    # 3 senders at 15 Mbit/s into one 20 Mbit/s host link with a 40-packet queue
    _topo, plain = _run(tmp_path / "none", "incast", 300 * 1024, **INCAST)
    _topo, dcqcn = _run(tmp_path / "dcqcn", "incast", 300 * 1024, reaction="dcqcn",
                        reaction_params={"timer_s": 0.02, "cnp_interval_s": 0.005}, **INCAST)
    p, d = plain.metrics.records[0], dcqcn.metrics.records[0]
    for rec in (p, d):
        _consistent(rec)
        assert rec["ecn_marked"] > 0
    assert plain.switch["summary"]["switch_ecn_marked"] > 0
    assert plain.switch["summary"]["max_queue"] >= 20
    assert p["packets_lost"] > 0
    assert d["rate_cuts"] > 0
    # Quiet machine: plain loses ~2/3 of its packets, DCQCN under half of that. With the CPU saturated by
    # other work the senders cannot even reach their rate and plain loses less (0.44 vs 0.35 seen), so
    # the margin asked for is 15 %, not 2x: the claim is the direction, the size is in docs/experiments.md.
    assert d["loss_fraction"] < 0.85 * p["loss_fraction"]


def test_ethlab_traffic_run_command(tmp_path, capsys):
    from ethlab.cli import main

    out = tmp_path / "cli"
    rc = main(["traffic", "run", "all_reduce", "--topo", "leafspine", "--spines", "1", "--size", "48KiB",
               "--policy", "ecmp", "--iterations", "2", "--out", str(out)])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "busbw" in printed and "switch ports" in printed
    metrics = json.loads((out / "metrics.json").read_text())
    assert [r["iteration"] for r in metrics["records"]] == [0, 1]
    assert all(r["complete"] and r["packets_lost"] == 0 for r in metrics["records"])
    header = (out / "metrics.csv").read_text().splitlines()[0].split(",")
    for name in ("collective", "iteration", "time_s", "algbw_GBps", "busbw_GBps", "fct_p99_s", "ecn_fraction",
                 "packets_lost", "reordered"):
        assert name in header
    sw = json.loads((out / "switch.json").read_text())
    assert {r["switch"] for r in sw["links"]} == {"leaf1", "leaf2", "spine1"}
