"""Virtual-time runs on MPI ranks (mpi4py + the mpich wheel's mpiexec): one trial's independent partitions
over 2 and 3 ranks (3 oversubscribes a 2-core machine) give metrics.json, flows.csv and links.csv
byte-identical to one process and to the fork backend; a sweep of 2 variants × 3 repetitions over 3 ranks
gives the serial run's summary.json and runs/ tree. These tests skip only when MPI cannot start here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ethlab.experiment.runner import run_experiment
from ethlab.experiment.spec import parse_spec
from tests.support.mpi import mpi_env

FILES = ("metrics.json", "flows.csv", "links.csv")
ROOT = Path(__file__).resolve().parents[2]

PARTS = {"name": "mpi-parts", "topology": {"name": "erack", "params": {"gpus": 4, "planes": 3, "radix": 8}},
         "clock": "virtual", "seed": 2, "repetitions": 1,
         "virtual": {"time_limit_s": 0.01, "queue_depth": 8, "backend": "mpi"},
         "traffic": {"pattern": "all_to_all", "size": "64KiB", "params": {"planes": 3}},
         "policies": [{"name": "ecmp"}]}
SWEEP = {"name": "mpi-sweep", "topology": {"name": "erack", "params": {"gpus": 4, "planes": 2, "radix": 8}},
         "clock": "virtual", "seed": 3, "repetitions": 3, "virtual": {"time_limit_s": 0.01, "queue_depth": 8},
         "traffic": {"pattern": "all_to_all", "size": "16KiB", "params": {"planes": 2}},
         "policies": [{"label": "plain", "name": "ecmp"},
                      {"label": "dcqcn", "name": "ecmp", "engine": {"reaction": "dcqcn"}}]}


def _ethlab_ranks(spec: dict, ranks: int, out: Path) -> None:
    path = out.with_suffix(".yaml")
    path.write_text(yaml.safe_dump(spec))
    res = subprocess.run([sys.executable, "-m", "ethlab.cli", "run", str(path), "--ranks", str(ranks),
                          "--out", str(out)], capture_output=True, text=True, timeout=600, env=mpi_env(), cwd=ROOT)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]


def _records(root: Path) -> dict[str, bytes]:
    return {f"{p.parent.parent.name}/{p.parent.name}/{p.name}": p.read_bytes()
            for p in sorted(root.glob("runs/*/*/*")) if p.name in FILES}


def _in_process(raw: dict, out: Path, **virtual) -> Path:
    raw = dict(raw, virtual=dict(raw["virtual"], **virtual))
    outcome = run_experiment(parse_spec(raw), out, plots=False)
    assert outcome.state == "complete", outcome.error
    return out


def _simulated_by(root: Path) -> str:
    return json.loads(next(root.glob("runs/*/rep0/switch.json")).read_text())["virtual"]["simulated_by"]


@pytest.mark.slow
def test_partitions_on_2_and_3_ranks_are_byte_identical(tmp_path: Path, launcher: str) -> None:
    one = _records(_in_process(PARTS, tmp_path / "one", backend="fork", workers=1))
    fork = tmp_path / "fork"
    forked = _records(_in_process(PARTS, fork, backend="fork", workers=3))
    assert _simulated_by(fork) == "3 processes (independent partitions)"
    assert len(one) == 3 and b'"clock": "virtual"' in one["ecmp/rep0/metrics.json"]
    assert one == forked
    for ranks in (2, 3):
        out = tmp_path / f"mpi{ranks}"
        _ethlab_ranks(PARTS, ranks, out)
        assert _simulated_by(out) == f"{ranks} MPI ranks (independent partitions)"
        got = _records(out)
        for name in one:
            assert got[name] == one[name], f"{name}: {ranks} MPI ranks differ from one process"


def _summary(root: Path) -> dict:
    data = json.loads((root / "summary.json").read_text())
    for row in data["trials"]:
        row.pop("load_1m")  # the load average each trial met: differs between serial reruns too
    for agg in data["policies"]:
        agg.pop("load_1m", None)
    return data


@pytest.mark.slow
def test_sweep_over_3_ranks_gives_the_serial_summary(tmp_path: Path, launcher: str) -> None:
    serial = _in_process(SWEEP, tmp_path / "serial")
    out = tmp_path / "mpi3"
    _ethlab_ranks(SWEEP, 3, out)
    a, b = _summary(serial), _summary(out)
    assert len(a["trials"]) == 6 and a["state"] == "complete"
    assert a == b
    assert _records(serial) == _records(out) and len(_records(out)) == 18
    def tree(root: Path) -> list[str]:  # the CLI also keeps the spec file it read, and draws plots
        names = (str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
        return sorted(n for n in names if n != "spec.original.yaml" and not n.startswith("plots/"))

    assert tree(serial) == tree(out)
    assert (out / "report.md").exists() and list((out / "plots").glob("*.png"))
