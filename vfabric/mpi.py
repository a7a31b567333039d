"""The MPI seam (mpi4py): which ranks this process has, and waiting for the others without spinning.

mpi4py is imported only inside an MPI job (a launcher's environment: mpiexec/mpirun of MPICH or Open MPI,
Slurm's srun), so a plain run never initialises MPI. MPICH's and Open MPI's blocking collectives busy-poll;
on a machine whose cores the ranks share (the oversubscribed `mpiexec -n 3` on 2 cores), a rank waiting
for a slower one would take CPU from it, so `polite_barrier` waits on a non-blocking barrier with sleeps
before any collective whose partners may be far behind.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any, Protocol

# set by the launchers: MPICH's hydra (PMI_*), Open MPI (OMPI_*), PMIx launchers, Slurm's srun
LAUNCHER_ENV = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "SLURM_STEP_NUM_TASKS")
POLL_S = 0.002  # sleep between tests of a pending barrier


class Comm(Protocol):
    """What ethlab uses of an mpi4py communicator (lower-case methods pickle Python objects)."""

    def Get_rank(self) -> int: ...

    def Get_size(self) -> int: ...

    def allgather(self, obj: Any) -> list[Any]: ...

    def gather(self, obj: Any, root: int = 0) -> list[Any] | None: ...

    def bcast(self, obj: Any, root: int = 0) -> Any: ...

    def Ibarrier(self) -> Any: ...


class MPIUnavailable(RuntimeError):
    """MPI was asked for and cannot be used here (the message says why)."""


def in_mpi_job() -> bool:
    """Whether a launcher started this process as one of several ranks."""
    for key in LAUNCHER_ENV:
        value = os.environ.get(key)
        if value is not None:
            return key == "PMIX_RANK" or (value.isdigit() and int(value) > 1)
    return False


def world() -> Comm | None:
    """COMM_WORLD when this process is one of several ranks, else None (one process: nothing to share)."""
    if not in_mpi_job():
        return None
    try:
        from mpi4py import MPI
    except ImportError as err:  # pragma: no cover - make setup installs it
        raise MPIUnavailable(f"started by an MPI launcher but mpi4py cannot be imported: {err}") from None
    comm = MPI.COMM_WORLD
    return comm if comm.Get_size() > 1 else None


def polite_barrier(comm: Comm) -> None:
    """A barrier that sleeps while it waits (see the module's docstring)."""
    req = comm.Ibarrier()
    while not req.Test():
        time.sleep(POLL_S)


def mpiexec() -> str | None:
    """The launcher next to this Python (the `mpich` wheel puts it in the venv's bin/), else on PATH."""
    here = Path(sys.executable).parent / "mpiexec"
    if here.exists():
        return str(here)
    return shutil.which("mpiexec") or shutil.which("mpirun")


def oversubscribe_flags(launcher: str) -> list[str]:
    """What lets more ranks than cores start: Open MPI refuses without `--oversubscribe`; MPICH's hydra
    needs nothing."""
    import subprocess

    try:
        out = subprocess.run([launcher, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return ["--oversubscribe"] if "Open MPI" in out or "OpenRTE" in out else []


def describe() -> dict[str, Any]:
    """What `ethlab doctor` reports: mpi4py's version, the MPI library it is built against, the launcher."""
    out: dict[str, Any] = {"mpiexec": mpiexec()}
    try:
        import mpi4py

        out["mpi4py"] = mpi4py.__version__
    except ImportError as err:
        out["error"] = f"mpi4py not importable: {err}"
        return out
    import subprocess

    # MPI's library version needs MPI initialised: ask a child process, so this one stays MPI-free
    code = "from mpi4py import MPI; print(MPI.Get_library_version().splitlines()[0].strip())"
    try:
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        out["library"] = " ".join(res.stdout.split()) or None  # "MPICH Version:      5.0.2" -> one space
        if res.returncode != 0:
            out["error"] = (res.stderr.strip().splitlines() or ["MPI did not initialise"])[-1]
    except (OSError, subprocess.SubprocessError) as err:
        out["error"] = f"MPI did not initialise: {err}"
    return out
