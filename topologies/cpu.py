"""CPU seconds used by this process and everything it started, for per-phase accounting.

On a shared machine wall time says as much about the neighbours as about us; CPU time of our own process
tree (this process, its reaped children, and every live descendant with its reaped children: switch
processes, host shells and what they ran) is much less affected by load."""

from __future__ import annotations

import os


def _stat_times(pid: int) -> tuple[int, float]:
    """(parent pid, utime+stime+cutime+cstime in seconds) of a live process, or (0, 0.0)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0, 0.0
    ticks = sum(int(x) for x in fields[11:15])
    return int(fields[1]), ticks / _HZ


_HZ = os.sysconf("SC_CLK_TCK")


def tree_cpu_s() -> float:
    """CPU seconds of this process and all its descendants (live ones and those already reaped)."""
    me = os.getpid()
    t = os.times()
    total = t.user + t.system + t.children_user + t.children_system
    parents: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            pid = int(name)
            ppid, secs = _stat_times(pid)
            parents[pid] = ppid
            cpu[pid] = secs
    for pid, secs in cpu.items():
        p, hops = parents.get(pid, 0), 0
        while p and p != me and hops < 64:
            p, hops = parents.get(p, 0), hops + 1
        if p == me and pid != me:
            total += secs
    return total
