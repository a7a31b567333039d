"""Run state: every kernel object and process ethlab creates is written here *as it is created*, so that
`ethlab clean` can remove exactly those and nothing else (never by a broad pattern like Mininet's cleanup).

One JSON file per run: /run/ethlab/<run-id>.json (override the directory with ETHLAB_STATE_DIR)."""

from __future__ import annotations

import json
import os
import secrets
import string
import tempfile
import time
from dataclasses import dataclass, field, fields
from pathlib import Path

from p4exec.privdir import UnsafeDirectory, ensure_private_dir

PREFIX = "el"  # first letters of every netns / interface ethlab creates
_ALPHABET = string.ascii_lowercase + string.digits
RUN_ID_LEN = 3  # interface names are at most 15 bytes: el + run id + s<dev>-<port>


def state_dir() -> Path:
    return Path(os.environ.get("ETHLAB_STATE_DIR", "/run/ethlab"))


def new_run_id() -> str:
    """A short random id (starting with a letter) not used by a state file that still exists."""
    taken = {p.stem for p in state_dir().glob("*.json")} if state_dir().is_dir() else set()
    for _ in range(1000):
        rid = secrets.choice(string.ascii_lowercase) + "".join(
            secrets.choice(_ALPHABET) for _ in range(RUN_ID_LEN - 1))
        if rid not in taken:
            return rid
    raise RuntimeError("no free ethlab run id")


@dataclass
class RunState:
    """What one run created. Lists only grow while the run builds; cleanup empties them."""

    run_id: str
    topology: str = ""
    label: str = ""  # who made the run ("up", "test", ...): lets `ethlab down` stop only its own kind of run
    created: float = field(default_factory=time.time)
    owner_pid: int = field(default_factory=os.getpid)
    owner_start: int = -1  # the owner's start time (clock ticks): `ethlab down` signals only that very process
    netns: list[str] = field(default_factory=list)  # named namespaces (ip netns)
    interfaces: list[str] = field(default_factory=list)  # root-namespace interfaces (veth ends)
    # name -> [pid, start time in clock ticks (/proc/PID/stat field 22)]: the start time guards against
    # killing an unrelated process that reused the pid after ours exited
    pids: dict[str, list[int]] = field(default_factory=dict)
    grpc_ports: dict[str, int] = field(default_factory=dict)  # switch name -> gRPC port
    files: list[str] = field(default_factory=list)  # temporary files to delete
    # device group of the root-namespace interfaces: `ip link delete group G` removes thousands of veths in one
    # batched kernel operation instead of one RCU grace period each (cleanup checks every member is ours first)
    link_group: int | None = None
    log_dir: str = ""
    nft_table: str = ""  # nftables table keeping the run's TCP ports for root on this machine (portguard)

    def __post_init__(self) -> None:
        if self.owner_start == -1 and self.owner_pid == os.getpid():
            self.owner_start = proc_start_time(self.owner_pid)

    @property
    def path(self) -> Path:
        return state_dir() / f"{self.run_id}.json"

    @property
    def prefix(self) -> str:
        return f"{PREFIX}{self.run_id}"

    def default_link_group(self) -> int:
        """0x454cXXXX ("EL" + 16 bits of the run id): unlikely to be anyone else's group."""
        h = 0
        for c in self.run_id:
            h = (h * 37 + ord(c)) & 0xFFFF
        return 0x454C0000 | h

    def save(self) -> None:
        # The state directory must be ours and closed to others (cleanup acts on what these files say), and the
        # file is written through a fresh temporary name, never through a symlink someone planted.
        ensure_private_dir(self.path.parent)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.run_id}-", suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w") as f:
                # fields hold only str/int/float/lists/dicts of those: no asdict() deep copy (a 512-host run
                # saves a few hundred kB dozens of times while it builds)
                json.dump({f.name: getattr(self, f.name) for f in fields(self)}, f, separators=(",", ":"))
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def add_netns(self, name: str) -> None:
        self.netns.append(name)
        self.save()

    def add_pid(self, key: str, pid: int, save: bool = True) -> None:
        """Record a process; `save=False` when the caller saves once after a batch of them."""
        self.pids[key] = [pid, proc_start_time(pid)]
        if save:
            self.save()

    def add_interfaces(self, names: list[str]) -> None:
        self.interfaces.extend(names)
        self.save()

    @classmethod
    def load(cls, run_id_or_path: str | Path) -> RunState:
        p = Path(run_id_or_path)
        if not p.suffix:
            p = state_dir() / f"{run_id_or_path}.json"
        data = json.loads(p.read_text())
        return cls(**data)


def proc_start_time(pid: int) -> int:
    """Start time of a running process in clock ticks since boot, or -1 if it is gone (or a zombie)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return -1
    fields = stat.rsplit(")", 1)[1].split()
    return -1 if fields[0] in ("Z", "X") else int(fields[19])


def all_runs() -> list[RunState]:
    d = state_dir()
    if not d.is_dir():
        return []
    try:
        ensure_private_dir(d)  # state someone else could have written is not acted on
    except UnsafeDirectory:
        return []
    runs = []
    for p in sorted(d.glob("*.json")):
        try:
            runs.append(RunState.load(p))
        except (OSError, ValueError, TypeError):
            continue
    return runs
