"""MPI test helpers: an environment in which a test starts its own launcher."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def mpi_env() -> dict[str, str]:
    env = dict(os.environ)
    for key in ("PMI_SIZE", "PMI_RANK", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "SLURM_STEP_NUM_TASKS"):
        env.pop(key, None)  # a test run under a launcher still starts its own
    env["PYTHONPATH"] = str(ROOT)
    return env
