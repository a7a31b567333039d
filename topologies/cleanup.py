"""Remove what one ethlab run created, found only through its state file (topologies.run_records).

Deliberately narrow: a process is signalled only if its pid *and* start time match what was recorded, and
only the namespaces and interfaces named in the file are deleted. Mininet's own cleanup (`mn -c`) kills by
pattern and must never be used on a shared machine."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from topologies.portguard import unguard
from topologies.run_records import RunState, all_runs, proc_start_time


@dataclass
class CleanReport:
    run_id: str
    killed: list[str] = field(default_factory=list)
    netns: list[str] = field(default_factory=list)
    interfaces: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)  # seconds per step


def _ours(pid: int, start: int) -> bool:
    return start >= 0 and proc_start_time(pid) == start


def _existing_netns() -> set[str]:
    d = Path("/run/netns")
    return {p.name for p in d.iterdir()} if d.is_dir() else set()


def _link_exists(name: str) -> bool:
    return Path(f"/sys/class/net/{name}").exists()


def kill_recorded(pids: dict[str, list[int]], timeout: float = 3.0) -> list[str]:
    """SIGTERM every live recorded process, wait (bounded), then SIGKILL what is left."""
    live = {k: pid for k, (pid, start) in pids.items() if _ours(pid, start)}
    for key, pid in live.items():
        # Mininet's shells are interactive bash, which ignores SIGTERM but exits on a hang-up
        sig = signal.SIGHUP if key.startswith(("host:", "shell:")) else signal.SIGTERM
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(_ours(pid, pids[k][1]) for k, pid in live.items()):
        time.sleep(0.05)
    for k, pid in live.items():
        if _ours(pid, pids[k][1]):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    return sorted(live)


def _delete_group(run: RunState) -> list[str]:
    """Delete the run's root interfaces in one batch, but only if every member of the group is ours."""
    if run.link_group is None:
        return []
    out = subprocess.run(["ip", "-o", "link", "show", "group", str(run.link_group)], capture_output=True,
                         text=True).stdout
    members = {ln.split(":")[1].strip().split("@")[0] for ln in out.splitlines() if ":" in ln}
    if members and members <= set(run.interfaces):
        subprocess.run(["ip", "link", "delete", "group", str(run.link_group)], capture_output=True)
        return sorted(members)
    return []


def clean_run(run: RunState) -> CleanReport:
    rep = CleanReport(run.run_id)
    mark = time.monotonic()

    def step(name: str) -> None:
        nonlocal mark
        now = time.monotonic()
        rep.timings[name] = round(now - mark, 3)
        mark = now

    rep.killed = kill_recorded(run.pids)
    step("kill")
    in_group = _delete_group(run)
    step("link_group")
    existing = _existing_netns()
    doomed = [ns for ns in run.netns if ns in existing]
    if doomed:
        subprocess.run(["ip", "-force", "-batch", "-"], input="".join(f"netns delete {ns}\n" for ns in doomed),
                       capture_output=True, text=True)
        left = _existing_netns()
        rep.netns = [ns for ns in doomed if ns not in left]
        rep.errors.extend(f"netns {ns} still present" for ns in doomed if ns in left)
    step("netns")
    gone = set(in_group)  # deleted with the group: no need to look for them one by one (6,144 for upn)
    batch = [f"link del {name}" for name in run.interfaces if name not in gone and _link_exists(name)]
    if batch:
        # -force: keep going past interfaces whose veth peer was deleted a moment ago
        subprocess.run(["ip", "-force", "-batch", "-"], input="\n".join(batch) + "\n", capture_output=True,
                       text=True)
        rep.interfaces = [b.split()[-1] for b in batch]
        remaining = [n for n in rep.interfaces if _link_exists(n)]
        rep.errors.extend(f"interface {n} still present" for n in remaining)
    rep.interfaces = in_group + rep.interfaces
    step("links")
    for f in run.files:
        Path(f).unlink(missing_ok=True)
    if run.nft_table:  # only after the processes behind the guarded ports are gone
        unguard(run.nft_table)
    if not rep.errors:
        run.path.unlink(missing_ok=True)
    return rep


def owner_alive(run: RunState) -> bool:
    return run.owner_pid != os.getpid() and Path(f"/proc/{run.owner_pid}").exists()


def clean(run_ids: list[str] | None = None, include_live: bool = False, label: str | None = None
          ) -> list[CleanReport]:
    """Clean the given runs, or every recorded run whose owning process has exited (all with include_live);
    `label` restricts either to runs made with that FabricOptions.label."""
    runs = [r for r in all_runs() if label is None or r.label == label]
    if run_ids:
        wanted = set(run_ids)
        runs = [r for r in runs if r.run_id in wanted]
    elif not include_live:
        runs = [r for r in runs if not owner_alive(r)]
    return [clean_run(r) for r in runs]
