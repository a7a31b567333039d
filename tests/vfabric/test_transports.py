"""Transports in virtual time: the same rc-gbn / sr / none state machines the emulated engine drives, with
ACK/NAK/CNP as real frames through the P4 program. A link that fails during a ring all-reduce on a
leaf/spine fabric loses what was on it and in its queue: rc-gbn and sr repair it (every byte delivered,
retransmissions reported), `none` reports the collective incomplete."""

from __future__ import annotations

from pathlib import Path

import pytest

from ethlab.experiment.spec import parse_spec
from ethlab.experiment.trial import TrialSetup
from ethlab.experiment.virtual_trial import run_virtual_trial
from tests.support.vfabric import replay
from topologies.builtins import erack
from traffic.replay import pattern_plan
from vfabric.hosts import HostConfig

# Time constants for a 10 Gbit/s fabric with µs RTTs (the transports' defaults are the emulation's).
TRANSPORT_PARAMS = {"rto_s": 200e-6, "rto_init_s": 200e-6, "ack_delay_s": 5e-6}


def _spec(transport: str) -> dict:
    return {
        "name": f"vt-{transport}", "topology": {"name": "leafspine"}, "clock": "virtual", "seed": 1,
        "engine": {"transport": transport, "transport_params": TRANSPORT_PARAMS},
        "virtual": {"time_limit_s": 0.05, "control_delay_s": 50e-6, "loss_grace_s": 200e-6},
        "traffic": {"pattern": "all_reduce", "size": "1MiB", "algorithm": "ring"},
        "policies": [{"name": "ecmp"}],
        # both spine uplinks of leaf1 carry the ring's traffic; one fails mid-run and stays down
        "faults": [{"at_s": 60e-6, "action": "link_down", "a": "leaf1", "b": "spine1"}],
    }


def _run(transport: str, out: Path) -> dict:
    import json

    spec = parse_spec(_spec(transport))
    variant = spec.variants[0]
    topo = spec.build_topology()
    setup = TrialSetup(topo, variant.make_policy(), spec.plan(topo), spec.engine_config(variant),
                       queue_depth=None, seed=spec.seed, faults=list(spec.faults))
    run_virtual_trial(setup, out, options=spec.virtual)
    return json.loads((out / "metrics.json").read_text())


@pytest.mark.parametrize("transport", ["rc-gbn", "sr"])
def test_link_fault_during_allreduce_is_repaired(transport: str, tmp_path: Path) -> None:
    m = _run(transport, tmp_path)
    s = m["summary"]
    assert s["transport"] == transport
    assert s["packets_lost"] == 0 and s["complete"], s
    assert s["retransmitted"] > 0, "the failed link lost packets: they must have been sent again"
    rec = m["records"][0] if "records" in m else None
    if rec is not None:
        assert rec["bytes_delivered"] == rec["bytes_scheduled"]


def test_link_fault_under_none_is_incomplete(tmp_path: Path) -> None:
    s = _run("none", tmp_path)["summary"]
    assert s["transport"] == "none"
    assert not s["complete"] and s["packets_lost"] > 0, s
    assert s["retransmitted"] == 0


def test_feedback_frames_cross_the_fabric() -> None:
    """rc-gbn on an idle ERack+: no loss, no retransmission, and every ACK went through the switch."""
    topo = erack(gpus=4, planes=1, radix=4, rate_gbps=100, delay_us=0.0)
    eids = sorted(ep.eid for ep in topo.endpoints.values())
    plan = pattern_plan("all_reduce", eids, 256 << 10, 1, "ring")
    got = replay(topo, plan, hosts=HostConfig(transport="rc-gbn", transport_params=TRANSPORT_PARAMS))
    flows = got.result.flows
    assert all(f.complete and f.retransmitted == 0 for f in flows)
    fb_sent = sum(f.feedback_sent for f in flows)
    assert fb_sent > 0 and fb_sent == sum(f.feedback_received for f in flows)
    data = sum(f.sent for f in flows)
    sw = got.fabric.switches["p0"]
    assert sw.executions == data + fb_sent  # data and ACKs both ran through the P4 pipeline


def test_reliable_reruns_are_byte_identical(tmp_path: Path) -> None:
    """Retransmissions, timers and feedback frames keep virtual time deterministic."""
    _run("sr", tmp_path / "a")
    _run("sr", tmp_path / "b")
    for name in ("metrics.json", "flows.csv", "links.csv"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
