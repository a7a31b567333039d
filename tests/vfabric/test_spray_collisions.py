"""Spray against ECMP on a two-tier fabric with hash collisions, in virtual time (deterministic, so the
comparison carries no rerun noise): one UPN plane of 16 GPUs at 400 Gbit/s, radix 8 (4 leaves of 4 hosts,
two spines), an all-to-all. ECMP hashes flows of a step onto the same uplink, whose queue overflows;
per-packet spraying spreads them. Selective repeat takes spray's reordering without a spurious
retransmission; go-back-N does not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ethlab.experiment.spec import parse_spec
from ethlab.experiment.trial import TrialSetup
from ethlab.experiment.virtual_trial import run_virtual_trial

# µs-scale time constants for a 400 Gbit/s fabric (the transports' defaults are the emulation's)
TRANSPORT_PARAMS = {"rto_s": 200e-6, "rto_init_s": 200e-6, "ack_delay_s": 2e-6, "reorder_s": 10e-6}


def _run(policy: str, transport: str, out: Path) -> dict:
    spec = parse_spec({
        "name": f"collide-{policy}-{transport}", "clock": "virtual", "seed": 1,
        "topology": {"name": "upn", "params": {"gpus": 16, "planes": 1, "radix": 8, "rate_gbps": 400}},
        "engine": {"transport": transport, "transport_params": TRANSPORT_PARAMS},
        "virtual": {"time_limit_s": 0.05, "probe_interval_s": 5e-6},
        "traffic": {"pattern": "all_to_all", "size": "1MiB", "iterations": 1},
        "policies": [{"name": policy}],
    })
    variant = spec.variants[0]
    topo = spec.build_topology()
    setup = TrialSetup(topo, variant.make_policy(), spec.plan(topo), spec.engine_config(variant),
                       queue_depth=64, seed=spec.seed, faults=[])
    run_virtual_trial(setup, out, options=spec.virtual)
    summary: dict = json.loads((out / "metrics.json").read_text())["summary"]
    assert summary["complete"] and summary["goodput_bytes"] == 16 * 15 * (1 << 20) // 16, summary  # 16 GPUs x 15 peers x 1/16 MiB
    return summary


@pytest.mark.slow  # a whole all-to-all experiment compared across four variants: in make test, not test-fast
@pytest.mark.timeout(300)
def test_spray_with_selective_repeat_beats_colliding_ecmp(tmp_path: Path) -> None:
    ecmp = _run("ecmp", "sr", tmp_path / "ecmp-sr")
    spray = _run("spray", "sr", tmp_path / "spray-sr")
    gbn = _run("spray", "rc-gbn", tmp_path / "spray-gbn")
    # ECMP's collisions overflow a queue: packets are lost and sent again, and the collective takes longer
    assert ecmp["retransmitted"] > 0
    assert spray["duration_s"] < 0.75 * ecmp["duration_s"]  # measured: 22.4 µs vs 47.2 µs
    # spray reorders; selective repeat delivers the overtakers, go-back-N throws them away and resends
    assert spray["spurious_retransmissions"] == 0 and spray["retransmitted"] == 0
    assert gbn["reordered"] > 0 and gbn["spurious_retransmissions"] > 0
    assert spray["wire_bytes"] <= gbn["wire_bytes"] and spray["wire_bytes"] < ecmp["wire_bytes"]
