"""Reliable transports on a real emulated leaf/spine fabric (p4exec switches running p4src/ethplus.p4, the
controller over P4Runtime): a link failure during an all-reduce is repaired under rc-gbn and reported
incomplete under none; per-packet spraying costs go-back-N dearly (spurious retransmissions, low goodput)
and selective repeat nothing."""

from __future__ import annotations

import pytest

from controller.policies import make_policy
from ethlab.bringup import running_fabric
from ethlab.experiment.emulated import run_emulated_trial
from ethlab.experiment.faults import Fault
from ethlab.experiment.trial import TrialSetup
from topologies.yaml_loader import load as load_topology
from traffic.records import DEFAULT_BURST, HostConfig, ns
from traffic.replay import pattern_plan, ports_for_topology, replay

pytestmark = [pytest.mark.netns, pytest.mark.timeout(400)]


def _linkfail(tmp_path, transport: str):
    topo = load_topology("leafspine")
    eids = sorted(ep.eid for ep in topo.endpoints.values())
    plan = pattern_plan("all_reduce", eids, 256 * 1024, 3, "ring", slices=4)
    engine = HostConfig(flow_rate_bps=10e6, time_limit_ns=ns(60), loss_grace_ns=ns(0.5), transport=transport, catch_up_frames=DEFAULT_BURST)
    setup = TrialSetup(topo, make_policy("ecmp"), plan, engine, rate_scale=2e-3, queue_depth=64, seed=1,
                       faults=[Fault(at_s=0.15, action="link_down", a="leaf1", b="spine1")])
    return run_emulated_trial(setup, tmp_path / transport)


def test_link_failure_during_all_reduce(tmp_path):
    # In wall-clock emulation the failure instant can fall where no frame is queued for the failed port (seen
    # under `rc-gbn` too, in a full-suite run beside another: nothing retransmitted, run complete). Such a run
    # must still be complete and whole; it is repeated, at most three times, until the failure hits traffic.
    for attempt in range(3):
        gbn = _linkfail(tmp_path / f"gbn{attempt}", "rc-gbn")
        s = gbn.metrics.summary
        assert s["complete"] and not s["timed_out"] and s["failed_flows"] == 0
        assert all(r["complete"] and r["bytes_delivered"] == r["bytes_scheduled"] for r in gbn.metrics.records)
        hit = [r for r in gbn.metrics.records if r["retransmitted"]]
        if hit:
            break
    assert hit, "the link failure never cost a packet in three emulated runs"
    assert all(r["recovery_s"] > 0 and r["timeouts"] + r["naks"] > 0 for r in hit)
    assert gbn.switch["faults"][0]["error"] is None

    # Under `none` the same failure is reported, not repaired. In wall-clock emulation the failure instant can
    # fall where no frame is queued for the failed port (seen once in a full-suite run: nothing lost, run
    # complete), so a run the failure missed is checked for consistency and repeated, at most three times.
    for attempt in range(3):
        none = _linkfail(tmp_path / f"try{attempt}", "none")
        lost = sum(r["packets_lost"] for r in none.metrics.records)
        if lost:
            break
        assert none.metrics.summary["complete"]  # nothing lost: complete, and nothing to retransmit
        assert all(r["retransmitted"] == 0 for r in none.metrics.records)
    assert lost, "the link failure never hit traffic in three emulated runs"
    assert not none.metrics.summary["complete"]
    lossy = [r for r in none.metrics.records if not r["complete"]]
    assert lossy and all(r["packets_lost"] > 0 and r["retransmitted"] == 0 for r in lossy)


def _a2a(policy: str, transports: list[str]) -> dict[str, dict]:
    topo = load_topology("leafspine")
    eids = sorted(ep.eid for ep in topo.endpoints.values())
    out = {}
    with running_fabric(topo, policy=policy, rate_scale=2e-3, queue_depth=64) as running:
        ports = ports_for_topology(topo, running.fabric.netns)
        for tr in transports:
            plan = pattern_plan("all_to_all", eids, 128 * 1024, 2, seed=1)
            cfg = HostConfig(flow_rate_bps=10e6, time_limit_ns=ns(60), loss_grace_ns=ns(0.5), transport=tr, catch_up_frames=DEFAULT_BURST)
            _r, m = replay(plan, ports, cfg)
            recs = m.records
            out[tr] = {**m.summary, "goodput": sum(r["goodput_GBps"] for r in recs) / len(recs),
                       "naks": sum(r["naks"] for r in recs),
                       "efficiency": m.summary["goodput_bytes"] / m.summary["wire_bytes"]}
    return out


def test_spray_reorder_costs_go_back_n_not_selective_repeat():
    spray = _a2a("spray", ["rc-gbn", "sr"])
    ecmp = _a2a("ecmp", ["rc-gbn", "sr"])
    assert all(x["complete"] for x in (*spray.values(), *ecmp.values()))
    assert spray["rc-gbn"]["reordered"] > 0  # spray reorders; go-back-N throws the overtakers away
    assert spray["rc-gbn"]["spurious_retransmissions"] > 10 * (1 + ecmp["rc-gbn"]["spurious_retransmissions"])
    assert spray["rc-gbn"]["naks"] > 0
    assert spray["rc-gbn"]["goodput"] < ecmp["rc-gbn"]["goodput"]
    # selective repeat delivers the reordered packets as they come: ~1/50 of go-back-N's waste on a quiet
    # machine; a starved process adds timeout retransmissions to both (1/10 seen with a busy neighbour)
    assert spray["sr"]["spurious_retransmissions"] <= spray["rc-gbn"]["spurious_retransmissions"] // 8
    assert spray["sr"]["goodput"] > 1.5 * spray["rc-gbn"]["goodput"]  # 1.9-3x measured, CPU-dependent
    # ... and wastes no more of the wire than ECMP does. (A goodput-per-second comparison between two separate
    # wall-clock runs is left to virtual time: on two shared cores it moves by more than the effect.)
    assert spray["sr"]["efficiency"] >= 0.95 * ecmp["sr"]["efficiency"]


@pytest.mark.parametrize("transport", ["sr", "rc-gbn"])
def test_trimming_turns_drops_into_naks(tmp_path, transport: str):
    """Incast into a 40-packet queue with trimming on at 30: the receivers see trimmed headers and NAK them,
    every byte arrives, and the repair does not wait for timeouts."""
    topo = load_topology("leafspine")
    eids = sorted(ep.eid for ep in topo.endpoints.values())
    plan = pattern_plan("incast", eids, 200 * 1024, sink=eids[0])
    engine = HostConfig(flow_rate_bps=15e6, time_limit_ns=ns(60), loss_grace_ns=ns(0.5), transport=transport, catch_up_frames=DEFAULT_BURST)
    policy = make_policy("ecmp", ecn=False, trim_threshold=30)
    res = run_emulated_trial(TrialSetup(topo, policy, plan, engine, rate_scale=2e-3, queue_depth=40, seed=1),
                    tmp_path / transport)
    (rec,) = res.metrics.records
    assert rec["complete"] and rec["bytes_delivered"] == rec["bytes_scheduled"]
    assert rec["trimmed"] > 0 and rec["naks"] > 0
    assert rec["naks"] >= rec["timeouts"]
