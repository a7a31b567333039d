"""Run one experiment spec twice and read back its virtual-time records, for byte-identity checks."""

from __future__ import annotations

from pathlib import Path

from ethlab.experiment.runner import run_experiment
from ethlab.experiment.spec import Spec

RECORDS = ("metrics.json", "flows.csv", "links.csv")


def records_of_two_runs(spec: Spec, tmp_path: Path) -> list[dict[str, bytes]]:
    """Each run's records (path under its results directory -> bytes); the first run lives in `tmp_path/0`."""
    runs = []
    for k in range(2):
        root = tmp_path / str(k)
        out = run_experiment(spec, root, plots=False)
        assert out.state == "complete", out.error
        runs.append({p.relative_to(root).as_posix(): p.read_bytes()
                     for p in sorted(root.glob("runs/*/*/*")) if p.name in RECORDS})
    return runs
