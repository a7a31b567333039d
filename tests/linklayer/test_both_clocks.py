"""The same small spec in both clocks with link errors and LLR: a ring all-reduce on the leaf/spine at FER
1e-3, once on the emulated fabric (p4exec switch processes and the engine's NIC ports each run the link layer
on their veths, with the LLR shim on the wire) and once in virtual time. Transport `none`: nothing end to end
repairs a loss, so 0 loss means LLR repaired every corrupted frame, hop by hop, in both."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.policies import make_policy
from ethlab.experiment.emulated import run_emulated_trial
from ethlab.experiment.trial import TrialResult, TrialSetup
from ethlab.experiment.virtual_trial import run_virtual_trial
from linklayer import LinkLayerConfig
from topologies.yaml_loader import load as load_topology
from traffic.records import DEFAULT_BURST, HostConfig, ns
from traffic.replay import pattern_plan

pytestmark = [pytest.mark.netns, pytest.mark.timeout(400)]

LINK = LinkLayerConfig.parse({"frame_error_rate": 1e-3, "llr": True})


def _setup() -> TrialSetup:
    topo = load_topology("leafspine")
    eids = sorted(ep.eid for ep in topo.endpoints.values())
    plan = pattern_plan("all_reduce", eids, 1 << 20, 1, "ring")
    engine = HostConfig(flow_rate_bps=20e6, time_limit_ns=ns(60), loss_grace_ns=ns(1.0), catch_up_frames=DEFAULT_BURST)
    return TrialSetup(topo, make_policy("ecmp"), plan, engine, seed=3, sample_interval_s=None, queue_depth=512,
                      link_layer=LINK)


def _check(res: TrialResult) -> dict:
    s = res.summary
    ll = s["link_layer"]
    assert s["complete"] and s["packets_lost"] == 0, (s, ll)
    assert ll["frames_corrupted"] > 0 and ll["llr_replays"] > 0 and ll["llr_discards"] == 0, ll
    assert sum(r["llr_tx_replay"] for r in res.links) > 0  # switch ports replayed too (links.csv)
    return ll


def test_llr_repairs_link_errors_in_both_clocks(tmp_path: Path) -> None:
    emulated = _check(run_emulated_trial(_setup(), tmp_path / "emulated"))
    virtual = _check(run_virtual_trial(_setup(), tmp_path / "virtual", options={"time_limit_s": 0.05}))
    # ~2 x 700 data frames per hop-flow: a few corrupted frames per run in either clock (each its own draw)
    for ll in (emulated, virtual):
        assert 1 <= ll["frames_corrupted"] <= 100
