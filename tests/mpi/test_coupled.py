"""Coupled partitions on MPI ranks (vfabric/cut.py, vfabric/window.py): a leaf/spine ring all-reduce under `sr`
with a leaf-spine link going down and coming back, its fabric cut across switch↔switch links, on 2 and 3 ranks
(3 oversubscribes a 2-core machine): metrics.json, flows.csv and links.csv byte-identical to one process.
Shuffling the order in which a rank receives its boundary frames changes nothing; a lookahead longer than
the cut allows is caught (a frame would arrive inside the window that sent it). Skip only when MPI cannot
start here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from ethlab.experiment.runner import run_experiment
from ethlab.experiment.spec import parse_spec
from tests.support.mpi import ROOT, mpi_env
from vfabric.mpi import oversubscribe_flags

FILES = ("metrics.json", "flows.csv", "links.csv")
RING: dict[str, Any] = {"name": "coupled-ring",
        "topology": {"name": "leafspine", "params": {"leaves": 2, "spines": 2, "hosts_per_leaf": 2, "delay_us": 0.5}},
        "clock": "virtual", "seed": 1, "repetitions": 1,
        "engine": {"transport": "sr", "transport_params": {"rto_s": 100e-6, "rto_init_s": 100e-6,
                                                           "ack_delay_s": 2e-6, "reorder_s": 10e-6}},
        "virtual": {"time_limit_s": 0.01, "control_delay_s": 10e-6, "queue_depth": 16, "backend": "mpi"},
        "traffic": {"pattern": "all_reduce", "algorithm": "ring", "size": "256KiB"},
        "policies": [{"name": "ecmp"}],
        "faults": [{"at_s": 5e-6, "action": "link_down", "a": "leaf1", "b": "spine1", "for_s": 30e-6}]}


# transport none: feedback in-process, so both ends of every flow on one rank (the leaves), spines cut away;
# NICs send ahead and hosts account arrivals in batches, which must decide as one whole run would
NONE: dict[str, Any] = {"name": "coupled-none",
        "topology": {"name": "leafspine", "params": {"leaves": 2, "spines": 2, "hosts_per_leaf": 2, "delay_us": 0.5}},
        "clock": "virtual", "seed": 1, "repetitions": 1,
        "virtual": {"time_limit_s": 0.01, "queue_depth": 8, "backend": "mpi", "partition": "coupled"},
        "traffic": {"pattern": "all_to_all", "size": "256KiB"}, "policies": [{"name": "ecmp"}]}


def _records(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(root.glob("runs/*/rep0/*")) if p.name in FILES}


def _simulated_by(root: Path) -> str:
    return json.loads(next(root.glob("runs/*/rep0/switch.json")).read_text())["virtual"]["simulated_by"]


@pytest.fixture(scope="module")
def one_process(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    out = tmp_path_factory.mktemp("one")
    outcome = run_experiment(parse_spec(RING), out, plots=False)
    assert outcome.state == "complete", outcome.error
    got = _records(out)
    assert len(got) == 3
    flows = got["flows.csv"].decode().splitlines()
    assert len(flows) == 1 + 2 * 3 * 4  # ring all-reduce on 4 hosts: 2(n-1) steps of 4 transfers
    metrics = json.loads(got["metrics.json"])
    assert metrics["summary"]["complete"] and metrics["summary"]["retransmitted"] > 0  # the fault bit
    return got


def _spec_file(tmp: Path, raw: dict = RING) -> Path:
    path = tmp / f"{raw['name']}.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def _ethlab_ranks(spec: Path, ranks: int, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ethlab.cli", "run", str(spec), "--ranks", str(ranks),
                           "--out", str(out)], capture_output=True, text=True, timeout=600, env=mpi_env(), cwd=ROOT)


def _driver(launcher: str, what: str, spec: Path, out: Path, ranks: int = 2) -> subprocess.CompletedProcess:
    return subprocess.run([launcher, "-n", str(ranks), *oversubscribe_flags(launcher), sys.executable,
                           str(ROOT / "tests" / "mpi" / "coupled_driver.py"), what, str(spec), str(out)],
                          capture_output=True, text=True, timeout=600, env=mpi_env(), cwd=ROOT)


@pytest.mark.slow
def test_coupled_ring_on_2_and_3_ranks_is_byte_identical(tmp_path: Path, launcher: str,
                                                         one_process: dict[str, bytes]) -> None:
    spec = _spec_file(tmp_path)
    for ranks, shape in ((2, "2+2 switches, 2 cut links"), (3, "1+1+2 switches, 4 cut links")):
        out = tmp_path / f"mpi{ranks}"
        res = _ethlab_ranks(spec, ranks, out)
        assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
        assert _simulated_by(out) == f"{ranks} MPI ranks (coupled partitions: {shape}, lookahead 967 ns)"
        got = _records(out)
        for name in FILES:
            assert got[name] == one_process[name], f"{name}: {ranks} coupled ranks differ from one process"


@pytest.mark.slow
def test_shuffled_inbox_changes_nothing(tmp_path: Path, launcher: str, one_process: dict[str, bytes]) -> None:
    out = tmp_path / "shuffled"
    res = _driver(launcher, "shuffle", _spec_file(tmp_path), out)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    assert "coupled partitions" in _simulated_by(out)
    assert _records(out) == one_process


@pytest.mark.slow
def test_a_frame_inside_its_window_is_caught(tmp_path: Path, launcher: str) -> None:
    out = tmp_path / "long"
    res = _driver(launcher, "long", _spec_file(tmp_path), out)
    text = res.stdout + res.stderr
    assert res.returncode != 0
    assert "inside the window that ended at" in text and "lookahead 19340 ns too long" in text, text[-3000:]
    assert "Traceback" not in text


@pytest.mark.slow
def test_transport_none_on_2_ranks_is_byte_identical(tmp_path: Path, launcher: str) -> None:
    one = tmp_path / "one"
    outcome = run_experiment(parse_spec(dict(NONE, virtual=dict(NONE["virtual"], backend="fork"))), one, plots=False)
    assert outcome.state == "complete", outcome.error
    out = tmp_path / "mpi2"
    res = _ethlab_ranks(_spec_file(tmp_path, NONE), 2, out)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    assert _simulated_by(out) == "2 MPI ranks (coupled partitions: 2+2 switches, 4 cut links, lookahead 967 ns)"
    assert _records(out) == _records(one) and len(_records(one)) == 3
