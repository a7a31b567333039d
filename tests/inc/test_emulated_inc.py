"""In-network all-reduce emulated: p4exec switch processes running ethplus_inc.p4 in network namespaces, the
controller over P4Runtime, the replay engine's sockets; the same plan in virtual time gives the same sums and
byte counts."""

from __future__ import annotations

import shutil

import pytest

from controller.policies import make_policy
from ethlab.experiment.emulated import run_emulated_trial
from ethlab.experiment.trial import TrialSetup
from ethlab.experiment.virtual_trial import run_virtual_trial
from topologies import load
from traffic.records import DEFAULT_BURST, HostConfig, ns
from traffic.replay import pattern_plan

pytestmark = [pytest.mark.netns, pytest.mark.timeout(400)]


def _setup(topo, size: int, planes: int, target: str = "p4exec") -> TrialSetup:
    eids = sorted(ep.eid for ep in topo.endpoints.values())
    plan = pattern_plan("all_reduce", eids, size, algorithm="inc", planes=planes, slots=8, timeout_us=100_000.0)
    engine = HostConfig(flow_rate_bps=20e6, time_limit_ns=ns(120), loss_grace_ns=ns(0.5), frame_format="ethplus", catch_up_frames=DEFAULT_BURST)
    return TrialSetup(topo, make_policy("ecmp"), plan, engine, target=target, seed=1, sample_interval_s=None,
                      rate_scale=1e-3 if target == "bmv2" else None)


@pytest.mark.parametrize(("topo_name", "params", "size", "planes"),
                         [("leafspine", {}, 48 * 1024, 1), ("erack", {"gpus": 16, "planes": 4}, 64 * 1024, 4)],
                         ids=["leafspine", "erack16x4"])
def test_emulated_inc_all_reduce_verified_and_equal_to_virtual(tmp_path, topo_name, params, size, planes) -> None:
    topo = load(topo_name, **params)
    emu = run_emulated_trial(_setup(topo, size, planes), tmp_path / "emulated").metrics
    (rec,) = emu.records
    assert rec["complete"] and rec["inc"]["verified"], rec["inc"]
    assert emu.summary["inc"]["verified"]
    virt = run_virtual_trial(_setup(topo, size, planes), tmp_path / "virtual").metrics
    (vrec,) = virt.records
    assert vrec["complete"] and vrec["inc"]["verified"]
    # the same sums (both checked against the same seed) over the same chunks; the same bytes unless the
    # emulation had to retransmit
    for key in ("chunks", "results_checked", "wrong_sums", "elements_per_frame", "planes"):
        assert rec["inc"][key] == vrec["inc"][key], key
    sent = rec["inc"]["frames_sent"] - rec["inc"]["retransmissions"]
    assert sent == vrec["inc"]["frames_sent"] - vrec["inc"]["retransmissions"]


@pytest.mark.bmv2
@pytest.mark.skipif(not (shutil.which("simple_switch_grpc") and shutil.which("p4c-bm2-ss")),
                    reason="BMv2 path: needs simple_switch_grpc and p4c-bm2-ss on PATH (not installed here)")
@pytest.mark.parametrize(("topo_name", "params", "size", "planes"),
                         [("leafspine", {}, 48 * 1024, 1), ("erack", {"gpus": 16, "planes": 4}, 64 * 1024, 4)],
                         ids=["leafspine", "erack16x4"])
def test_inc_all_reduce_on_bmv2(tmp_path, topo_name, params, size, planes) -> None:
    """The same aggregation compiled by p4c and run by simple_switch_grpc (paced as BMv2 runs are)."""
    metrics = run_emulated_trial(_setup(load(topo_name, **params), size, planes, "bmv2"), tmp_path).metrics
    (rec,) = metrics.records
    assert rec["complete"] and rec["inc"]["verified"], rec["inc"]
