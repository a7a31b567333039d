"""What the MPI tests share: an environment that starts its own launcher, and the launcher once it has shown
that 2 ranks start and talk (else the tests that need it skip, saying why)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.mpi import mpi_env
from vfabric.mpi import mpiexec, oversubscribe_flags


@pytest.fixture(scope="session")
def launcher() -> str:
    """mpiexec, once it has shown it starts 2 ranks that talk; else the tests skip saying why."""
    found = mpiexec()
    if found is None:
        pytest.skip("MPI cannot start: no mpiexec next to this Python or on PATH (make setup installs the mpich wheel)")
    code = "from mpi4py import MPI; c = MPI.COMM_WORLD; assert c.allreduce(1) == c.Get_size() == 2"
    try:
        res = subprocess.run([found, "-n", "2", *oversubscribe_flags(found), sys.executable, "-c", code],
                             capture_output=True, text=True, timeout=120, env=mpi_env())
    except (OSError, subprocess.TimeoutExpired) as err:
        pytest.skip(f"MPI cannot start here: {err}")
    if res.returncode != 0:
        pytest.skip(f"MPI cannot start here: {(res.stderr or res.stdout).strip()[-300:]}")
    return found
