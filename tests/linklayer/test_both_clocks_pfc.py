"""The same small spec in both clocks with PFC on: a 3->1 incast on the leaf/spine (transport `none`: nothing
end to end repairs a loss). On the emulated fabric the p4exec switch processes account their buffers by
ingress port and priority and send real 802.1Qbb frames on their veths, and the engine's NIC ports obey them;
in virtual time the same code runs on the simulator. In both: pauses sent and obeyed, no frame dropped by any
buffer, 0 end-to-end loss."""

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

# Headroom covers what arrives between the frame that crosses XOFF and the peer's stop. In emulation that
# includes how late a switch process reads its receive ring: on a loaded 2-core machine tens of ms, and at
# 10 Mbit/s 64 kB is only 51 ms of line rate. 400 kB (~320 ms) keeps the test about PFC, not the scheduler.
LINK = LinkLayerConfig.parse({"flow_control": "pfc", "pfc": {"xoff_bytes": 30_000, "xon_bytes": 15_000,
                                                             "headroom_bytes": 400_000}})


def _setup() -> TrialSetup:
    topo = load_topology("leafspine")  # 10 Gbit/s links; emulated at 1e-3 of that: 10 Mbit/s queues
    eids = sorted(ep.eid for ep in topo.endpoints.values())
    plan = pattern_plan("incast", eids, 192 * 1024, 1, None, sink=eids[0])
    engine = HostConfig(flow_rate_bps=10e6, time_limit_ns=ns(60), loss_grace_ns=ns(1.0), catch_up_frames=DEFAULT_BURST)
    return TrialSetup(topo, make_policy("ecmp"), plan, engine, seed=3, sample_interval_s=None, rate_scale=1e-3,
                      link_layer=LINK)


def _check(res: TrialResult) -> dict:
    s = res.summary
    ll = s["link_layer"]
    assert s["complete"] and s["packets_lost"] == 0, (s, ll)
    assert ll["pause_frames"] > 0 and ll["paused_ns"] > 0 and ll["buffer_drops"] == 0, ll
    assert sum(r["pause_tx"] for r in res.links) > 0  # per switch port in links.csv
    return ll


def test_pfc_pauses_and_loses_nothing_in_both_clocks(tmp_path: Path) -> None:
    _check(run_emulated_trial(_setup(), tmp_path / "emulated"))
    _check(run_virtual_trial(_setup(), tmp_path / "virtual", options={"time_limit_s": 0.05}))


# LLR's replay timer must outlast the link's loop time, and in emulation that loop holds how late the two
# processes run — the same delay the 400 kB headroom covers. Measured with this fix, 4 corrupted frames a run:
# at the nominal 5 us (5 ms emulated) on an idle machine 6-12 replays, the timer's all in the run's first tens
# of ms; at 20 us (20 ms) 3 replays idle but 3-28 (and 2 discards) at load 10; at 300 us (300 ms) 3 replays,
# one per NAK, in 5 of 5 runs at load 9-10. Before the fix, at 20 us: 30-40 replays.
ALL_ON = LinkLayerConfig.parse({"frame_error_rate": 1e-3, "llr": {"replay_timeout_ns": 300_000},
                                "flow_control": "pfc",
                                "pfc": {"xoff_bytes": 30_000, "xon_bytes": 15_000, "headroom_bytes": 400_000}})


def test_errors_llr_and_pfc_together_in_both_clocks(tmp_path: Path) -> None:
    """Issue 30's small spec with everything on: link errors repaired by LLR, the incast held by PFC; nothing
    lost end to end (transport `none`), replays and pauses counted in both clocks. LLR replays only what the
    errors cost — at most one replay per corrupted frame (a NAK, or the timer for a lost NAK or tail) — and
    gives up on nothing: its timer waits while PFC holds a port, and the engine acknowledges what its NICs
    received when the run ends (before: 169 replays for 4 errors and 2 discards in emulation)."""
    for name, run, extra in (("emulated", run_emulated_trial, {}),
                             ("virtual", run_virtual_trial, {"options": {"time_limit_s": 0.05}})):
        setup = _setup()
        setup.link_layer = ALL_ON
        ll = _check(run(setup, tmp_path / name, **extra))
        assert ll["frames_corrupted"] > 0 and ll["llr_replays"] > 0, (name, ll)
        assert ll["llr_discards"] == 0, (name, ll)
        assert ll["llr_replays"] <= ll["frames_corrupted"], (name, ll)
        assert ll["paused_ns"] > 0, (name, ll)
