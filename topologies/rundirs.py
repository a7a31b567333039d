"""Where a run writes: a fresh directory per run that only root (the user running ethlab) can enter.

Run directories used to be `/tmp/ethlab-<id>` with 3-character ids, made with `mkdir(exist_ok=True)`: another
user could create them first, plant symlinks in them, or rewrite the `ip -batch` files ethlab then ran as root.
Now every run directory is made by `mkdtemp` (unpredictable name, mode 0700) under a parent that is checked to
be ours and closed to others; if someone else holds that parent, the run directory goes straight into the
temporary directory (mkdtemp is just as safe there) instead of failing.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from p4exec.privdir import UnsafeDirectory, fresh_dir

SOCKET_PATH_MAX = 100  # sun_path holds 108 bytes; leave room for "<switch>.sock"


def runs_parent() -> Path:
    """ETHLAB_RUNS_DIR, or <tmp>/ethlab-runs."""
    return Path(os.environ.get("ETHLAB_RUNS_DIR") or Path(tempfile.gettempdir()) / "ethlab-runs")


def new_run_dir(run_id: str) -> Path:
    """A new private directory for one run's logs, batch files and sockets."""
    prefix = f"ethlab-{run_id}-"
    try:
        return fresh_dir(runs_parent(), prefix)
    except (UnsafeDirectory, OSError):
        return Path(tempfile.mkdtemp(prefix=prefix))


def socket_dir(run_dir: Path) -> Path:
    """A private directory for the switches' gRPC sockets: inside the run directory when the path is short
    enough for a Unix socket name, else a fresh one in the temporary directory."""
    if len(str(run_dir)) <= SOCKET_PATH_MAX - 40:  # grpc-XXXXXXXX/ + switch name + .sock
        return Path(tempfile.mkdtemp(prefix="grpc-", dir=run_dir))
    return Path(tempfile.mkdtemp(prefix="ethlab-grpc-"))
