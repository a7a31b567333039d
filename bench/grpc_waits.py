"""What a fabric's idle P4Runtime streams cost the simulator's loop, side by side in one run.

A virtual-time fabric keeps its controller connected to every in-process switch over gRPC: per switch one
reader thread blocks in grpc's wait for the next stream response. grpc wakes such a wait every
`MAXIMUM_WAIT_TIMEOUT` so that a main thread can take signals; each wake-up takes the interpreter lock from the
one thread that does the work. This builds the UPN fabric of `bench/virtual.py` (its switches, controller and
streams, all idle), then times a fixed pure-Python loop (the simulator's kind of work) in the same process with
grpc's own 0.1 s and with the controller's `STREAM_WAIT_S`, alternating, and prints the CPU ratio per setting
against no waiting streams at all (measured first, before the fabric exists). Bounded: rounds x loop size.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import virtual as V  # noqa: E402
from grpc import _common  # noqa: E402

from controller.client import STREAM_WAIT_S  # noqa: E402
from topologies.builtins import upn  # noqa: E402

GRPC_DEFAULT_S = 0.1  # grpc's MAXIMUM_WAIT_TIMEOUT as shipped


def loop_cpu(n: int) -> float:
    """CPU seconds of this thread for a fixed dict-and-int loop (no I/O, no allocation growth)."""
    d: dict[int, int] = {}
    t = time.thread_time()
    for i in range(n):
        d[i & 1023] = d.get(i & 511, 0) + i
    return time.thread_time() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", type=int, default=512, help="UPN size (512: 48 switches)")
    ap.add_argument("--radix", type=int, default=128)
    ap.add_argument("--rounds", type=int, default=8, help="rounds per setting, alternated")
    ap.add_argument("--loop", type=int, default=2_000_000, help="iterations of the timed loop")
    args = ap.parse_args()
    alone = statistics.median(loop_cpu(args.loop) for _ in range(args.rounds))
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
    finally:
        _common.MAXIMUM_WAIT_TIMEOUT = STREAM_WAIT_S
        control.close()
    print(f"UPN {args.gpus}: {len(fab.switches)} in-process switches with idle P4Runtime streams; "
          f"loop of {args.loop:,} iterations, median of {args.rounds} rounds per setting, alternated")
    print(f"  no streams (before the fabric): {alone:.4f} s CPU")
    for s in settings:
        m = statistics.median(times[s])
        print(f"  grpc waits wake every {s:g} s: {m:.4f} s CPU, {m / alone:.3f}x the loop alone")
    gain = statistics.median(times[GRPC_DEFAULT_S]) / statistics.median(times[STREAM_WAIT_S])
    print(f"  the controller's setting ({STREAM_WAIT_S:g} s) runs the loop {gain:.3f}x as fast as grpc's default")


if __name__ == "__main__":
    main()
