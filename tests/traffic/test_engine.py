"""The replay engine for real, without a switch: namespaces, veth pairs, a Linux bridge, tbf for drops."""

from __future__ import annotations

import re
import time

import pytest

from tests.support.realtime import real_time
from traffic.checker import check
from traffic.collectives import make_schedule
from traffic.engine import Engine, PlannedCollective
from traffic.metrics import summarize
from traffic.netns import sh
from traffic.records import ns

# real namespaces and veth pairs (and real-time rates): the full suite, not the fast tier
pytestmark = pytest.mark.netns


def _deps_honoured(result, plan) -> None:
    base = 0
    for pc in plan:
        for t in pc.schedule.transfers:
            f = result.flows[base + t.id]
            for d in t.depends_on:
                assert f.start_ns >= result.flows[base + d].settle_ns > 0
        base += len(pc.schedule.transfers)


def test_ring_all_reduce_four_namespaces_zero_loss(bridge_lab) -> None:
    _lab, ports = bridge_lab
    s = make_schedule("all_reduce", [0, 1, 2, 3], 300_000, "ring", slices=2)
    check(s)
    plan = [PlannedCollective("ar", 0, s)]
    with Engine(ports, real_time(flow_rate_bps=400e6, time_limit_ns=ns(10))) as eng:
        r = eng.run(plan)
    assert not r.timed_out and r.rx_socket_drops == 0
    assert all(f.complete and f.lost == 0 and f.duplicates == 0 for f in r.flows)
    assert sum(f.delivered_bytes for f in r.flows) == s.total_bytes() == 2 * 3 * 300_000
    per_rank = {rank: sum(f.delivered_bytes for f in r.flows if f.src == rank) for rank in range(4)}
    assert per_rank == {rank: 2 * 3 * 300_000 // 4 for rank in range(4)}
    _deps_honoured(r, plan)
    rec = summarize(r).records[0]
    assert rec["complete"] and rec["packets_lost"] == 0 and rec["time_s"] > 0
    assert rec["busbw_GBps"] == pytest.approx(rec["algbw_GBps"] * 1.5)


def test_iterations_and_collective_ordering(bridge_lab) -> None:
    _lab, ports = bridge_lab
    ag = make_schedule("all_gather", [0, 1, 2, 3], 40_000)
    a2a = make_schedule("all_to_all", [0, 1, 2, 3], 40_000)
    plan = []
    for it in range(2):
        after = ((("a2a", it - 1),) if it else ())
        plan.append(PlannedCollective("ag", it, ag, after=after))
        plan.append(PlannedCollective("a2a", it, a2a, after=(("ag", it),)))
    with Engine(ports, real_time(flow_rate_bps=300e6, time_limit_ns=ns(10))) as eng:
        r = eng.run(plan)
    assert all(f.complete for f in r.flows)
    c = {(x.name, x.iteration): x for x in r.collectives}
    assert c[("a2a", 0)].start_ns >= c[("ag", 0)].end_ns
    assert c[("ag", 1)].start_ns >= c[("a2a", 0)].end_ns
    m = summarize(r)
    assert [s["iteration"] for s in m.steps] == [0, 1] and m.summary["step_time_p99_s"] > 0


def test_pacing_rate_is_respected(pair_lab) -> None:
    _lab, ports = pair_lab
    s = make_schedule("incast", [1, 0], 500_000)  # host 0 -> host 1, one flow
    rate = 40e6
    with Engine(ports, real_time(flow_rate_bps=rate, time_limit_ns=ns(10))) as eng:
        r = eng.run([PlannedCollective("one", 0, s)])
    f = r.flows[0]
    assert f.complete and f.lost == 0
    wire_bits = f.npkts * 1514 * 8
    fct = f.fct_s
    assert wire_bits / rate * 0.9 < fct < wire_bits / rate * 1.3


def test_tbf_drops_are_counted_as_loss(bridge_lab) -> None:
    lab, ports = bridge_lab
    lab.shape(0, "8mbit", burst="8kb", limit="12kb")
    try:
        s = make_schedule("incast", [0, 1, 2, 3], 150_000)  # 3 x 150 KB into host 0
        with Engine(ports, real_time(flow_rate_bps=100e6, time_limit_ns=ns(10), loss_grace_ns=ns(0.3))) as eng:
            r = eng.run([PlannedCollective("incast", 0, s)])
        stats = sh("ip", "netns", "exec", lab.bridge_ns, "tc", "-s", "qdisc", "show", "dev",
                   lab.bridge_port(0)).stdout
    finally:
        sh("ip", "netns", "exec", lab.bridge_ns, "tc", "qdisc", "del", "dev", lab.bridge_port(0), "root")
    tc_dropped = int(re.search(r"dropped (\d+)", stats).group(1))
    lost = sum(f.lost for f in r.flows)
    assert lost > 0 and r.rx_socket_drops == 0
    assert lost == tc_dropped  # every frame tbf threw away, and nothing else, is counted as lost
    assert all(f.sent == f.npkts and f.delivered + f.lost == f.npkts for f in r.flows)
    rec = summarize(r).records[0]
    assert rec["packets_lost"] == lost and not rec["complete"]
    assert rec["bytes_delivered"] < rec["bytes_scheduled"]


def test_time_limit_bounds_the_run(pair_lab) -> None:
    _lab, ports = pair_lab
    s = make_schedule("incast", [1, 0], 50_000_000)  # would take 40 s at 10 Mbit/s
    t = time.monotonic()
    with Engine(ports, real_time(flow_rate_bps=10e6, time_limit_ns=ns(0.3))) as eng:
        r = eng.run([PlannedCollective("big", 0, s)])
    assert r.timed_out and time.monotonic() - t < 3
    assert 0 < r.packets_sent < r.flows[0].npkts


def test_packet_limit_bounds_the_run(pair_lab) -> None:
    _lab, ports = pair_lab
    s = make_schedule("incast", [1, 0], 1_000_000)
    with Engine(ports, real_time(flow_rate_bps=500e6, max_packets=100, time_limit_ns=ns(5))) as eng:
        r = eng.run([PlannedCollective("cap", 0, s)])
    assert r.packet_limit_hit and r.packets_sent == 100 and not r.timed_out


def test_ethplus_frames_ring_all_reduce(bridge_lab) -> None:
    _lab, ports = bridge_lab
    s = make_schedule("all_reduce", [0, 1, 2, 3], 100_000, "tree", slices=2)
    with Engine(ports, real_time(flow_rate_bps=300e6, frame_format="ethplus", reaction="hpcc")) as eng:
        r = eng.run([PlannedCollective("ar", 0, s)])
    assert all(f.complete and f.lost == 0 for f in r.flows)
    assert sum(f.delivered_bytes for f in r.flows) == s.total_bytes()
    assert all(f.qdepth_max == 0 for f in r.flows)  # no switch on the path raised the field


def test_trace_replay_through_cli_writes_metrics(tmp_path) -> None:
    import json
    from pathlib import Path

    from traffic.cli import main

    example = Path(__file__).resolve().parents[2] / "traffic" / "examples" / "tp-dp-step.yaml"
    rc = main(["lab", "--trace", str(example), "--hosts", "4", "--rate-mbps", "300", "--out", str(tmp_path)])
    assert rc == 0
    doc = json.loads((tmp_path / "metrics.json").read_text())
    assert len(doc["records"]) == 3 * 7 and all(r["complete"] and r["packets_lost"] == 0 for r in doc["records"])
    assert [s["iteration"] for s in doc["steps"]] == [0, 1, 2]
    assert doc["summary"]["step_time_p99_s"] >= doc["summary"]["step_time_p50_s"] > 0
    assert (tmp_path / "metrics.csv").read_text().count("\n") == 1 + 21


def test_port_rate_caps_flows_sharing_a_port(pair_lab) -> None:
    _lab, ports = pair_lab
    s = make_schedule("incast", [1, 0], 400_000, slices=2)  # two concurrent flows 0 -> 1
    assert len(s.transfers) == 2
    with Engine(ports, real_time(flow_rate_bps=100e6, port_rate_bps=40e6, time_limit_ns=ns(10))) as eng:
        r = eng.run([PlannedCollective("two", 0, s)])
    assert all(f.complete for f in r.flows)
    bits = sum(f.npkts for f in r.flows) * 1514 * 8
    t = r.collectives[0].time_s
    # the port, not the flows (2 x 100 Mbit/s would take bits / 200e6), sets the pace; a loop stalled by a busy
    # CPU loses port time it cannot catch up beyond `burst` frames, as an idle NIC would, hence the loose top
    assert bits / 40e6 * 0.9 < t < bits / 40e6 * 4


def test_packet_limit_stops_dependent_flows_at_once(bridge_lab) -> None:
    _lab, ports = bridge_lab
    s = make_schedule("all_reduce", [0, 1, 2, 3], 400_000, "ring")  # 6 dependent steps
    t = time.monotonic()
    with Engine(ports, real_time(flow_rate_bps=400e6, max_packets=50, loss_grace_ns=ns(0.2))) as eng:
        r = eng.run([PlannedCollective("ar", 0, s)])
    assert r.packet_limit_hit and r.packets_sent == 50 and not r.timed_out
    assert time.monotonic() - t < 1.5  # one grace period, not one per dependency level
    assert all(f.settle_ns for f in r.flows)
