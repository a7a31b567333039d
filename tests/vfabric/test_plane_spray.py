"""NIC plane spraying in virtual time (traffic/planes.py, the replay engine's plane-choice model): on an
ERack+ (one switch chip per plane), one GPU's plane-0 link fails during a ring all-reduce. Flows pinned to
that plane stall until the link is back and go-back-N's timeout fires; NICs that spray each flow over all
planes (round-robin, or least-loaded by their local port queue) steer around the plane that lost packets and
repair selectively. Deterministic: a rerun is byte-identical."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ethlab.experiment.spec import parse_spec
from ethlab.experiment.trial import TrialSetup
from ethlab.experiment.virtual_trial import run_virtual_trial

# µs-scale transport timers for a 400 Gbit/s fabric (the defaults are the emulation's)
TRANSPORT_PARAMS = {"rto_s": 20e-6, "rto_init_s": 20e-6, "ack_delay_s": 1e-6, "reorder_s": 4e-6}
GPUS, SIZE = 4, 1 << 20
VARIANTS = {
    "pinned-gbn": {"transport": "rc-gbn", "plane_policy": "pinned"},
    "rr-sr": {"transport": "sr", "plane_policy": "round-robin"},
    "ll-sr": {"transport": "sr", "plane_policy": "least-loaded"},
}


def _run(label: str, out: Path) -> tuple[dict, dict[str, bytes]]:
    spec = parse_spec({
        "name": f"plane-{label}", "clock": "virtual", "seed": 1,
        "topology": {"name": "erack", "params": {"gpus": GPUS, "planes": 4, "radix": 8}},
        "engine": {"transport_params": TRANSPORT_PARAMS},
        "virtual": {"time_limit_s": 0.01, "control_delay_s": 5e-6},
        "traffic": {"pattern": "all_reduce", "algorithm": "ring", "size": "1MiB", "iterations": 1},
        "policies": [{"label": label, "name": "ecmp", "engine": VARIANTS[label]}],
        "faults": [{"at_s": 2e-6, "action": "link_down", "a": "gpu0", "b": "p0", "for_s": 100e-6}],
    })
    variant = spec.variants[0]
    topo = spec.build_topology()
    setup = TrialSetup(topo, variant.make_policy(), spec.plan(topo), spec.engine_config(variant),
                       queue_depth=64, seed=spec.seed, faults=list(spec.faults))
    run_virtual_trial(setup, out, options=spec.virtual)
    summary: dict = json.loads((out / "metrics.json").read_text())["summary"]
    files = {name: (out / name).read_bytes() for name in ("metrics.json", "flows.csv", "links.csv")}
    return summary, files


@pytest.fixture(scope="module")
def first_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[dict, dict[str, bytes]]]:
    """Each variant run once for the module: the steering test reads their summaries, the determinism test
    reruns two of them against these files (a run is seconds of virtual time; no need to make it three times)."""
    out = tmp_path_factory.mktemp("plane-spray")
    return {label: _run(label, out / label) for label in VARIANTS}


@pytest.mark.timeout(300)
def test_spraying_nics_steer_around_a_failed_plane_link(first_runs: dict[str, tuple[dict, dict[str, bytes]]]) -> None:
    runs = {label: first_runs[label][0] for label in VARIANTS}
    for label, s in runs.items():  # every byte delivered, whatever the plane choice
        assert s["complete"], (label, s)
        assert s["goodput_bytes"] == 2 * (GPUS - 1) * SIZE, (label, s)
    pinned, rr, ll = runs["pinned-gbn"], runs["rr-sr"], runs["ll-sr"]
    # the pinned flows on gpu0's plane 0 wait out the 100 µs failure; sprayed ones do not
    assert pinned["duration_s"] > 100e-6 and pinned["retransmitted"] > 0 and pinned["timeouts"] > 0
    for s in (rr, ll):
        assert s["duration_s"] < 0.6 * pinned["duration_s"], (s["duration_s"], pinned["duration_s"])
        assert s["reordered"] > 0  # packets of one flow really took different planes
        assert s["retransmitted"] < pinned["retransmitted"]


@pytest.mark.timeout(300)
def test_sprayed_runs_are_deterministic(first_runs: dict[str, tuple[dict, dict[str, bytes]]], tmp_path: Path) -> None:
    for label in ("rr-sr", "ll-sr"):
        first = first_runs[label][1]
        _, second = _run(label, tmp_path / f"{label}-b")
        for name, data in first.items():
            assert data == second[name], f"{label}: {name} differs between two identical runs"
