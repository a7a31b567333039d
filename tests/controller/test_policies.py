"""Policies without switches: the documented example of writing your own (executed straight from
docs/controller.md) plugs into the fabric application, and the adaptive policy's probe plan/frames."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from controller.artifacts import build_artifacts
from controller.client import SwitchConnection
from controller.fabric import FabricController
from controller.policies import LB_ADAPTIVE, POLICIES, make_policy
from controller.probes import probe_flood_ports, probe_frame, probe_plan
from controller.routing import compute_routes
from controller.tables import desired
from topologies import load

DOC = Path(__file__).resolve().parents[2] / "docs" / "controller.md"


def _offline_controller(topo, policy) -> FabricController:
    """A controller whose connections are never opened: enough to compute what it would install."""
    art = build_artifacts()
    ctl = FabricController(topo, {s.name: "127.0.0.1:1" for s in topo.switches}, art, policy)
    ctl.state.connections = {s.name: SwitchConnection("127.0.0.1:1", p4info=art.p4info, name=s.name)
                             for s in topo.switches}
    return ctl


def _ecn_ports(ctl: FabricController, switch: str) -> set[int]:
    _state, updates = desired(ctl.connection(switch), switch, compute_routes(ctl.topo)[switch], ctl.policy, ctl.topo)
    table_id = ctl.connection(switch).index.table("ecn_config").preamble.id
    return {int.from_bytes(u.entity.table_entry.match[0].exact.value, "big") for u in updates
            if u.entity.table_entry.table_id == table_id}


def test_documented_policy_example_works() -> None:
    code = re.search(r"```python\n(# mypolicies.py.*?)```", DOC.read_text(), re.S)
    assert code is not None, "the example is in docs/controller.md"
    namespace: dict = {}
    exec(compile(code.group(1), str(DOC), "exec"), namespace)  # noqa: S102 - our own documentation
    try:
        policy = make_policy("ecmp-quiet-edge")
        assert type(policy).__name__ == "QuietEdgeEcmp"
        ctl = _offline_controller(load("leafspine"), policy)
        assert _ecn_ports(ctl, "leaf1") == {3, 4}        # towards the spines only, not the hosts
        assert _ecn_ports(ctl, "spine1") == {1, 2}
        assert policy.ecn_for_port("leaf1", 3).kmin == 20
    finally:
        POLICIES.pop("ecmp-quiet-edge", None)


def test_make_policy_options_and_errors() -> None:
    flowlet = make_policy("flowlet", flowlet_gap_us=50, ecn={"kmin": 10, "kmax": 80, "pmax": 0.1})
    assert flowlet.lb_params()["flowlet_gap_us"] == 50 and flowlet.ecn.params()["kmax"] == 80
    assert make_policy("ecmp", ecn=False).ecn is None
    with pytest.raises(ValueError, match="unknown policy"):
        make_policy("nope")
    with pytest.raises(ValueError, match="no option"):
        make_policy("ecmp", nonsense=1)


def test_adaptive_probe_plan_and_frames() -> None:
    from scapy.layers.l2 import Ether

    from traffic.layers import PKT_PROBE, EthPlus, EthPlusProbe

    topo = load("leafspine")
    plan = probe_plan(topo)
    # each leaf: 2 endpoints x 2 uplinks; spines send nothing (they only pass probes on)
    assert sorted((p.switch, p.port) for p in plan) == sorted(
        [(leaf, up) for leaf in ("leaf1", "leaf2") for up in (3, 4) for _ in range(2)])
    assert probe_flood_ports(topo, "spine1") == [1, 2] and probe_flood_ports(topo, "leaf1") == []
    frame = Ether(probe_frame("02:e5:00:01:00:03", plane=2, dst_index=300, seq=7))
    assert frame[EthPlus].pkt_type == PKT_PROBE and frame[EthPlus].plane == 2 and frame[EthPlus].version == 1
    assert (frame[EthPlusProbe].dst_index, frame[EthPlusProbe].path_qdepth, frame[EthPlusProbe].probe_seq) == (
        300, 0, 7)
    assert probe_plan(load("erack", gpus=8, planes=2)) == []  # single tier: nothing to learn
    adaptive = make_policy("adaptive")
    assert adaptive.lb_params()["mode"] == LB_ADAPTIVE and adaptive.uses_probes


def test_switch_local_tuning_params() -> None:
    """lb_tuning is written only by policies that use it; dlb and the herding-fixed adaptive do, with their
    documented defaults; out-of-range options are a clear error, not a P4Runtime failure later."""
    from p4src.wire import LBF_DRAIN_GAP, LBF_LOCAL_LOAD, LBF_NEAR_BEST, LBF_RANDOM_TIE, LBF_TRACE

    assert make_policy("ecmp").tuning_params() is None and make_policy("spray").tuning_params() is None
    assert make_policy("dlb").tuning_params() == {
        "flags": LBF_LOCAL_LOAD | LBF_DRAIN_GAP | LBF_RANDOM_TIE, "near_slack": 0, "drain_margin": 24}
    adaptive = make_policy("adaptive", trace=1)
    assert adaptive.tuning_params() == {
        "flags": LBF_LOCAL_LOAD | LBF_DRAIN_GAP | LBF_RANDOM_TIE | LBF_NEAR_BEST | LBF_TRACE, "near_slack": 1,
        "drain_margin": 4}
    assert make_policy("adaptive", lb_flags=0, near_slack=0, drain_margin=0).tuning_params() is None
    with pytest.raises(ValueError, match="drain_margin"):
        make_policy("dlb", drain_margin=70000).tuning_params()
