"""What a fabric's idle P4Runtime streams cost the simulator's loop, side by side in one run.

A virtual-time fabric keeps its controller connected to every in-process switch over gRPC: per switch one
reader thread blocks in grpc's wait for the next stream response. grpc wakes such a wait every
`MAXIMUM_WAIT_TIMEOUT` so that a main thread can take signals; each wake-up takes the interpreter lock from the
one thread that does the work. This builds the UPN fabric of `bench/virtual.py` (its switches, controller and
streams, all idle), then times a fixed pure-Python loop (the simulator's kind of work) in the same process with
grpc's own 0.1 s and with the controller's `STREAM_WAIT_S`, alternating, and prints the CPU ratio per setting
against no waiting streams at all (measured first, before the fabric exists). Bounded: rounds x loop size.

Then the same loop beside the two layouts of the control plane, alternated: one P4Runtime server and one
controller channel per switch (the layout before issue 33), and one server for all switches with one shared
channel (vfabric's now); each with one idle stream per switch, as the controller keeps. Printed with each
layout's thread count and wake-ups per second (voluntary context switches of all the process's threads).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import virtual as V  # noqa: E402
from grpc import _common  # noqa: E402

from controller.client import STREAM_WAIT_S, SwitchConnection  # noqa: E402
from p4exec.p4runtime.server import P4RuntimeServer  # noqa: E402
from topologies.builtins import upn  # noqa: E402

GRPC_DEFAULT_S = 0.1  # grpc's MAXIMUM_WAIT_TIMEOUT as shipped


def loop_cpu(n: int) -> float:
    """CPU seconds of this thread for a fixed dict-and-int loop (no I/O, no allocation growth)."""
    d: dict[int, int] = {}
    t = time.thread_time()
    for i in range(n):
        d[i & 1023] = d.get(i & 511, 0) + i
    return time.thread_time() - t


def loop_wall(n: int) -> float:
    """Wall seconds of the same loop: also the time it waited for the interpreter lock."""
    t = time.perf_counter()
    loop_cpu(n)
    return time.perf_counter() - t


def wakeups() -> int:
    """Voluntary context switches of every thread of this process so far (each is a wake-up)."""
    total = 0
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/status") as f:
                total += sum(int(line.split()[1]) for line in f if line.startswith("voluntary"))
        except OSError:
            pass
    return total


class Layout:
    """Idle streams to every switch: through one shared server (`per_switch=False`) or a server each."""

    def __init__(self, switches: list, shared_address: str, p4info, per_switch: bool, election: int) -> None:
        self.servers = ([P4RuntimeServer(sw, "127.0.0.1:0", max_workers=4, ticker=False).start()
                         for sw in switches] if per_switch else [])
        addresses = [s.address for s in self.servers] if per_switch else [shared_address] * len(switches)
        self.conns = [SwitchConnection(a, device_id=sw.device_id, p4info=p4info, election_id=election).connect()
                      for a, sw in zip(addresses, switches, strict=True)]

    def close(self) -> None:
        for c in self.conns:
            c.close()
        for s in self.servers:
            s.stop(grace=0.2)


def compare_layouts(fab, control, loop: int, rounds: int, alone: float, alone_wall: float) -> None:
    switches = [sw for _n, sw in sorted(fab.switches.items())]
    shared = next(iter(control.servers.values()))
    p4info = control.artifacts.p4info
    control.controller.close()  # its streams are the shared layout's; each layout below opens its own
    stats: dict[bool, dict[str, list[float]]] = {k: {"cpu": [], "wall": [], "threads": [], "wakeups": []}
                                                for k in (True, False)}
    for rnd in range(rounds):
        for per_switch in (True, False) if rnd % 2 == 0 else (False, True):
            layout = Layout(switches, shared.address, p4info, per_switch, election=100 + rnd)
            try:
                time.sleep(STREAM_WAIT_S + 0.2)  # every thread is in its idle wait
                w0, t0 = wakeups(), time.monotonic()
                stats[per_switch]["cpu"].append(loop_cpu(loop))
                stats[per_switch]["wall"].append(loop_wall(loop))
                time.sleep(1.0)
                stats[per_switch]["wakeups"].append((wakeups() - w0) / (time.monotonic() - t0))
                stats[per_switch]["threads"].append(len(os.listdir("/proc/self/task")))
            finally:
                layout.close()
    print(f"  control-plane layouts ({len(switches)} idle streams each), median of {rounds} rounds, alternated:")
    for per_switch, label in ((True, "a server and a channel per switch"), (False, "one server, one channel")):
        m = {k: statistics.median(v) for k, v in stats[per_switch].items()}
        print(f"    {label:34s}: {m['cpu']:.4f} s CPU, {m['cpu'] / alone:.3f}x the loop alone; "
              f"{m['wall']:.4f} s wall, {m['wall'] / alone_wall:.3f}x; "
              f"{m['threads']:.0f} threads, {m['wakeups']:.0f} wake-ups/s")
    gain = statistics.median(stats[True]["cpu"]) / statistics.median(stats[False]["cpu"])
    wall = statistics.median(stats[True]["wall"]) / statistics.median(stats[False]["wall"])
    print(f"  one server and channel run the loop {gain:.3f}x as fast (CPU), {wall:.3f}x (wall) as one per switch; "
          f"Python threads after both closed: {threading.active_count()}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", type=int, default=512, help="UPN size (512: 48 switches)")
    ap.add_argument("--radix", type=int, default=128)
    ap.add_argument("--rounds", type=int, default=8, help="rounds per setting, alternated")
    ap.add_argument("--loop", type=int, default=2_000_000, help="iterations of the timed loop")
    ap.add_argument("--no-layouts", dest="layouts", action="store_false",
                    help="skip the comparison of a server per switch with one server for all")
    args = ap.parse_args()
    alone = statistics.median(loop_cpu(args.loop) for _ in range(args.rounds))
    alone_wall = statistics.median(loop_wall(args.loop) for _ in range(args.rounds))
    fab, control = V.build(upn(gpus=args.gpus, planes=4, radix=args.radix, rate_gbps=200, delay_us=0.0),
                           mtu=4140, queue_depth=V.UPN_QUEUE_DEPTH, transport="sr")
    settings = (GRPC_DEFAULT_S, STREAM_WAIT_S)
    times: dict[float, list[float]] = {s: [] for s in settings}
    try:
        for rnd in range(args.rounds):
            for s in settings if rnd % 2 == 0 else settings[::-1]:
                _common.MAXIMUM_WAIT_TIMEOUT = s
                time.sleep(max(settings) + 0.1)  # every waiting thread has taken the new period
                times[s].append(loop_cpu(args.loop))
        _common.MAXIMUM_WAIT_TIMEOUT = STREAM_WAIT_S
        report(args, alone, times, settings)
        if args.layouts:
            compare_layouts(fab, control, args.loop, args.rounds, alone, alone_wall)
    finally:
        _common.MAXIMUM_WAIT_TIMEOUT = STREAM_WAIT_S
        control.close()


def report(args, alone: float, times: dict[float, list[float]], settings: tuple[float, ...]) -> None:
    print(f"UPN {args.gpus}: in-process switches with idle P4Runtime streams; "
          f"loop of {args.loop:,} iterations, median of {args.rounds} rounds per setting, alternated")
    print(f"  no streams (before the fabric): {alone:.4f} s CPU")
    for s in settings:
        m = statistics.median(times[s])
        print(f"  grpc waits wake every {s:g} s: {m:.4f} s CPU, {m / alone:.3f}x the loop alone")
    gain = statistics.median(times[GRPC_DEFAULT_S]) / statistics.median(times[STREAM_WAIT_S])
    print(f"  the controller's setting ({STREAM_WAIT_S:g} s) runs the loop {gain:.3f}x as fast as grpc's default")


if __name__ == "__main__":
    main()
