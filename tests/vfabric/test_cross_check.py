"""The same small spec in both clocks: a ring all-reduce on the leaf/spine at low load through the same
ethplus.p4, controller and plan, once on the emulated fabric (Mininet, p4exec switch processes, the replay
engine on sockets) and once in virtual time. Both deliver every packet, with the same packet and byte counts
per flow, and the switches' counters see the same ECMP paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.policies import make_policy
from ethlab.experiment.emulated import run_emulated_trial
from ethlab.experiment.trial import TrialSetup
from ethlab.experiment.virtual_trial import run_virtual_trial
from topologies.yaml_loader import load as load_topology
from traffic.records import DEFAULT_BURST, HostConfig, ns
from traffic.replay import pattern_plan

pytestmark = [pytest.mark.netns, pytest.mark.timeout(300)]


def _setup() -> TrialSetup:
    topo = load_topology("leafspine")
    eids = sorted(ep.eid for ep in topo.endpoints.values())
    plan = pattern_plan("all_reduce", eids, 96 * 1024, 1, "ring")
    engine = HostConfig(flow_rate_bps=20e6, time_limit_ns=ns(30), loss_grace_ns=ns(0.5), catch_up_frames=DEFAULT_BURST)
    return TrialSetup(topo, make_policy("ecmp"), plan, engine, seed=1, sample_interval_s=None)


def test_emulated_and_virtual_deliver_the_same_flows(tmp_path: Path) -> None:
    emulated = run_emulated_trial(_setup(), tmp_path / "emulated")
    virtual = run_virtual_trial(_setup(), tmp_path / "virtual", options={"time_limit_s": 0.01})
    for res in (emulated, virtual):
        assert res.summary["complete"] and res.summary["packets_lost"] == 0
    assert virtual.summary["clock"] == "virtual"

    def per_flow(out: Path) -> list[tuple[str, ...]]:
        rows = (out / "flows.csv").read_text().splitlines()[1:]
        cols = [r.split(",") for r in rows]
        return [(c[4], c[5], c[7], c[8], c[10], c[11]) for c in cols]  # src dst bytes packets delivered lost

    assert per_flow(tmp_path / "emulated") == per_flow(tmp_path / "virtual")
    # Same program, same entries, same flow entropy: ECMP picks the same spine for each flow in both clocks.
    def spine_load(res) -> dict[tuple[str, int], int]:
        return {(r["switch"], r["port"]): r["tx_packets"] for r in res.links if r["switch"].startswith("spine")}

    emu, vir = spine_load(emulated), spine_load(virtual)
    assert set(emu) == set(vir)
    for key in emu:  # the emulated fabric may carry a few packets of its own (e.g. neighbour discovery)
        assert vir[key] <= emu[key] <= vir[key] + 12, (emu, vir)
