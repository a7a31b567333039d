"""Virtual-time fabric speed, side by side in one run.

Run: .venv/bin/python bench/virtual.py [--scale erack|upn|all] [--size-kib N] [--p4sim-packets N]
     .venv/bin/python bench/virtual.py --ranks 2   (one process vs MPI ranks: independent planes, then the UPN
     all-to-all on coupled partitions (--upn-gpus, --coupled-radix), and the sync cost of an empty window)

1. Pipeline rate: simulated switch-pipeline executions (packets through ingress + egress of p4src/ethplus.p4)
   per second while vfabric runs a ring all-reduce on a small ERack+ (tables installed by the fabric
   controller over P4Runtime), against the in-process pipeline rate of the same program and tables measured
   here on the frames that run produced (goal: ≥ 0.7×, the event core, links, NICs and endpoints may cost
   at most 30 %). Rates are per second of the main thread's CPU time (stable when other processes share the
   cores; the P4Runtime servers' idle threads are not counted) and per wall-clock second; the in-process
   rate is measured right after each simulation run, in the same process state (P4Runtime servers still up),
   over as many frames as the run executed; the ratio is the median round's (after a warm-up round).
2. The reference: ns-3's P4sim module (BMv2 inside ns-3) — ~2,000 simulated packets per wall-clock second
   through one switch on its IPv4 forwarding case with 1000-byte packets (its published artifact; quoted in
   ethlab issue 13). The same case here: one vfabric switch running p4src/basic_l3.p4 (one /32 route per
   host, written straight into the switch's tables as P4sim's case loads them from a CLI file), two hosts,
   one flow of 1000-byte frames at 10 Gbit/s; simulated packets per wall-clock and per CPU second, next to
   2,000 pkt/s. Goal: ≥ 10×.
3. `--link-layer`: the cost of the link layer (linklayer/), side by side: the same ring all-reduce with the
   link layer absent and with LLR on at frame error rate 0 (sequence shim, replay buffer, ACKs; no errors),
   rounds alternating; simulated pipeline packets per CPU second and completion (virtual µs) of each.
4. `--scale`: ERack+ 64 GPUs × 8 planes, ring all-reduce of 16 MiB at 400 Gbit/s (goal ≤ 3 min wall), and
   UPN 512 all-to-all with 64 KiB per pair (goal ≤ 15 min, ≤ 8 GiB RSS): wall time, virtual time, RSS.
   `--baseline-tree PATH` (a checkout of another commit, e.g. `git worktree add /tmp/base 922acb4`): the
   scale runs of this tree and of PATH, each in a fresh process, alternating for `--baseline-rounds` rounds;
   wall and event-loop CPU per side (medians), CPU µs per pipeline packet, the ratio, and whether the
   records are byte-identical. Smaller proxies of the same path: `--upn-gpus 128 --upn-radix 64` (two
   tiers, as at 512), `--upn-kib`, `--erack-gpus`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import sys
import time
from pathlib import Path
from statistics import median
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _tree() -> Path:
    """Where the modules come from: this tree, or `--tree PATH` (a child run of `--baseline-tree`: the same
    bench code driving another checkout's simulator)."""
    if "--tree" in sys.argv[:-1]:
        return Path(sys.argv[sys.argv.index("--tree") + 1]).resolve()
    return ROOT


sys.path.insert(0, str(_tree()))

from controller.policies import make_policy  # noqa: E402
from linklayer import LinkLayerConfig  # noqa: E402
from p4exec.device.program import load_program  # noqa: E402
from p4exec.native.select import pipeline_choice  # noqa: E402
from p4exec.runtime import ActionCall, Lpm, TableEntry  # noqa: E402
from p4exec.runtime.hashes import csum16  # noqa: E402
from topologies.builtins import erack, line, upn  # noqa: E402
from traffic.metrics import summarize  # noqa: E402
from traffic.replay import pattern_plan  # noqa: E402
from vfabric.control import ControlPlane  # noqa: E402
from vfabric.fabric import FabricConfig, VirtualFabric  # noqa: E402
from vfabric.hosts import HostConfig  # noqa: E402
from vfabric.run import VirtualLimits, VirtualRun  # noqa: E402

P4SIM_PPS = 2000  # ns-3 P4sim, one BMv2 switch, IPv4 forwarding, 1000-byte packets (published artifact)
P4SIM_SOURCE = "ns-3 P4sim module's published artifact, as quoted in ethlab issue 13"


def load_note() -> str:
    """The machine's load average: wall-clock rates on a shared 2-core machine mean little without it."""
    one, five, _fifteen = os.getloadavg()
    return f"load average {one:.1f} (1 min) {five:.1f} (5 min) on {os.cpu_count()} cores"


def rss_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / (1 << 20)


#: RoCEv2's 4096-byte path MTU (what AI fabrics run): 4096 B of BTH payload per frame, an IP MTU of
#: 4096 + 44 (IPv4 20, UDP 8, BTH 12, ICRC 4) and 4154-byte frames. The scale runs use it by default; the
#: workload (bytes per collective) is the same whatever the MTU, only the number of frames changes.
ROCE_PATH_MTU_IP = 4096 + 44

#: Reliable transports' timers for the scale runs (their defaults are the emulation's, scaled to ms): the
#: UPN's base RTT is a few µs and a full 128-frame queue adds 21 µs per hop at 200 Gbit/s, so a 100 µs
#: retransmission timeout fires only for a lost tail; SACK-style loss detection (selective repeat) 10 µs
#: after a later packet was acknowledged; an ACK per 8 packets or after 1 µs.
SCALE_TRANSPORT_PARAMS = {"rto_s": 100e-6, "rto_init_s": 100e-6, "ack_delay_s": 1e-6, "reorder_s": 10e-6}


def build(topo, policy: str = "ecmp", mtu: int = 1500, queue_depth: int = FabricConfig.queue_depth,
          transport: str = "none", link_layer: LinkLayerConfig | None = None):
    hosts = HostConfig(mtu=mtu, transport=transport,
                       transport_params=SCALE_TRANSPORT_PARAMS if transport != "none" else {})
    fab = VirtualFabric(topo, FabricConfig(queue_depth=queue_depth, link_layer=link_layer or LinkLayerConfig()),
                        hosts)
    control = ControlPlane(fab, make_policy(policy))
    control.start()
    return fab, control


def run_plan(fab, control, plan, limit_s: float = 1.0, wall_s: float = 1800.0, show: bool = False,
             workers: int = 1):
    run = VirtualRun(fab, control, VirtualLimits(time_limit_s=limit_s, wall_limit_s=wall_s, workers=workers))

    last = [0.0]
    planned = [0]
    mine: list = []  # the records of the flows this process simulates, found once (the parent's loop is the longer)

    def progress(p) -> None:
        if show and p.wall_s - last[0] >= 5.0:  # a line every 5 s of wall clock, not every few thousand events
            last[0] = p.wall_s
            # Data frames of the flows this process simulates (a partition worker runs the others): `p.packets`
            # also counts acknowledgements and in-network frames, which no plan counts.
            eps = fab.endpoints
            only = eps.only
            if not planned[0]:
                mine.extend(f.rec for f in eps.flows if only is None or only[f.fid])
                planned[0] = sum(rec.npkts for rec in mine)
            sent = sum(rec.sent for rec in mine)
            print(f"\r  virtual {p.now_ns / 1e3:10.1f} µs, {sent:>11,} of {planned[0]:,} data frames sent{'' if only is None else ' here'} "
                  f"({sent / max(planned[0], 1):5.1%}), {p.executions:>11,} pipeline packets, "
                  f"{p.executions / max(p.wall_s, 1e-9):7,.0f} pkt/s wall, {p.wall_s:6.0f} s, RSS {rss_gib():.2f} GiB",
                  end="", flush=True)

    out = run.run(plan, HostConfig(flow_rate_bps=400e9), progress=progress)
    if show:
        print()
        from vfabric.partition import pss_bytes

        pss = sum(run.worker_pss)
        print(f"  simulated by {out.partitions}" + (
            f"; memory of all processes (proportional set size, shared pages counted once): "
            f"{(pss + pss_bytes()) / (1 << 30):.2f} GiB (this process's RSS {rss_gib():.2f} GiB)" if pss else ""))
        note = split_note(run.split)
        if note:
            print(note)
    # the event loop alone: loading the plan (flows, frame templates) and the collection before it are set-up,
    # as the in-process reference's set-up is not timed either
    return out, out.stats.wall_s, out.stats.cpu_s


def split_note(split) -> str:
    """The balance of a forked split, side by side per process (parent first): templates, phase 1 wall and
    CPU, the wait for the others' phase 1, phase 2; a worker's results collected and pickled; then how long the
    parent waited for its workers (the cost of an imbalance) and merged."""
    if len(split.marks) < 2:
        return ""
    lines = []
    for k in range(len(split.marks)):
        who = "parent  " if k == 0 else f"worker {k}"
        line = (f"    {who}: {split.events[k]:,} events, templates {split.span(k, 'start', 'templates'):5.1f} s, phase 1 "
                f"{split.span(k, 'templates', 'phase1'):6.1f} s wall / {split.span(k, 'templates', 'phase1', True):6.1f}"
                f" s CPU, waits {split.span(k, 'phase1', 'agreed'):5.1f} s, phase 2 {split.span(k, 'agreed', 'loop'):4.1f} s")
        if k:
            m = split.marks[k]
            ahead = (f"made ahead in {split.span(k, 'phase1', 'early'):.1f} s, kept" if "reused" in m else
                     "made ahead, then again" if "early" in m else "made")
            line += (f", results {ahead}: {m['collected'][0] - m['loop'][0]:4.1f} s after its loop, sent "
                     f"{split.marks[0]['results'][0] - m['collected'][0]:4.1f} s")
        lines.append(line)
    end = max(m["loop"][0] for m in split.marks)
    return ("  split balance (wall, CPU of the loop):\n" + "\n".join(lines)
            + f"\n  parent waited for the workers {split.span(0, 'phase1', 'agreed'):.1f} s (their phase 1) + "
              f"{split.span(0, 'loop', 'results'):.1f} s (their results, of which {end - split.marks[0]['loop'][0]:.1f} s "
              f"their loop); merge {split.span(0, 'results', 'merged'):.1f} s")


def pipeline_round(size: int) -> tuple[int, int, float, float, float, float, int, float]:
    """One vfabric run of the ring all-reduce, with the in-process rate of the same switch measured right
    after it: (pipeline packets, events, sim CPU s, sim wall s, in-process pkt/s CPU and wall,
    frames per in-process pass, virtual µs)."""
    topo = erack(gpus=8, planes=1, radix=8, rate_gbps=400, delay_us=0.0)
    fab, control = build(topo)
    sw = fab.switches["p0"]
    eids = sorted(ep.eid for ep in topo.endpoints.values())
    plan = pattern_plan("all_reduce", eids, size, 1, "ring")
    live = sw.live
    from p4exec.switch.tm import QueueInfo

    # the frames the switch is sent: a tap keeps the first 4096, then steps aside (costs the run nothing more)
    # frames arrive one by one (`receive`) or as a same-instant batch (`receive_batch`): both are tapped
    captured: list[tuple[int, bytes]] = []
    receive, receive_batch = sw.receive, sw.receive_batch

    def enough() -> None:
        if len(captured) >= 4096:
            del sw.receive, sw.receive_batch  # type: ignore[method-assign]  # the class's methods again

    def tap(port: int, frame: bytes) -> None:
        captured.append((port, frame))
        enough()
        receive(port, frame)

    def tap_batch(frames: list[tuple[int, bytes, int]]) -> None:
        captured.extend((port, frame) for port, frame, _seq in frames)
        enough()
        receive_batch(frames)

    sw.receive = tap  # type: ignore[method-assign]
    sw.receive_batch = tap_batch  # type: ignore[method-assign]

    def inprocess(n: int) -> tuple[float, float]:
        """(pkt/s of thread CPU, pkt/s wall) for ingress + egress of `n` captured frames: one pass, as the
        simulation is one run (best of the rounds on both sides)."""
        now = sw.tm.now_us()
        qi = QueueInfo(now, 0, 0, 0, 0)
        ingress, egress = live.ingress, live.egress
        c1, w1 = time.thread_time(), time.perf_counter()
        for i in range(n):
            port, frame = captured[i % len(captured)]
            for job in ingress(port, frame, now):
                egress(job, now, qi)
        return n / (time.thread_time() - c1), n / (time.perf_counter() - w1)

    base = sw.executions
    out, wall, cpu = run_plan(fab, control, plan)
    executed = sw.executions - base
    m = summarize(out.result).summary
    assert m["complete"] and m["packets_lost"] == 0, m
    # The same program with the same tables, in-process: ingress + egress per frame, nothing else; in the same
    # process state as the simulation had (P4Runtime servers still up), as many frames as it executed.
    n = min(max(executed, 5000), 40000)
    if not captured:
        raise SystemExit("bench: the tap saw no frame reach the switch (has its arrival path changed?)")
    ref = inprocess(n)
    control.close()
    return (executed, out.stats.events, cpu, wall, ref[0], ref[1], n, m["duration_s"] * 1e6)


def pipeline_rate(size: int, rounds: int) -> None:
    """A warm-up round, then `rounds` rounds of (vfabric run, in-process pass right after it). The ratio is
    taken per round — both sides measured seconds apart, in the same machine state — and the median round's
    is the result, so a burst of foreign load on one side of one round does not decide it. The warm-up
    round pays the process's first-run costs (memory arenas, the interpreter's specialisation of the code),
    which only the simulation, run first, would otherwise carry; it is shown, not counted."""
    warm = pipeline_round(size)
    rows = [pipeline_round(size) for _ in range(rounds)]
    executed, events, _c, _w, _ic, _iw, n, virt = rows[0]
    print(f"ring all-reduce {size >> 10} KiB on ERack+ 8 GPUs × 1 plane at 400 Gbit/s: {executed:,} pipeline "
          f"packets, {events:,} events, virtual {virt:.1f} µs; {rounds} rounds after a warm-up round")
    print(f"  vfabric          : {median(r[0] / r[2] for r in rows):10,.0f} pkt/s CPU   "
          f"{median(r[0] / r[3] for r in rows):10,.0f} pkt/s wall  median round")
    print(f"  in-process       : {median(r[4] for r in rows):10,.0f} pkt/s CPU   {median(r[5] for r in rows):10,.0f} "
          f"pkt/s wall  median round  (same program, same tables, {n:,} frames)")
    per_round = ", ".join(f"{r[0] / r[2] / r[4]:.3f}" for r in rows)
    print(f"  ratio            : {median(r[0] / r[2] / r[4] for r in rows):.3f}× (CPU)  "
          f"{median(r[0] / r[3] / r[5] for r in rows):.3f}× (wall)   goal ≥ 0.7×   median round; "
          f"rounds {per_round} (CPU); warm-up {warm[0] / warm[2] / warm[4]:.3f}")
    print(f"  best of each side: {max(r[0] / r[2] for r in rows) / max(r[4] for r in rows):.3f}× (CPU)")


def link_layer_round(size: int, link_layer: LinkLayerConfig | None) -> tuple[int, float, float, int]:
    """One ring all-reduce: (pipeline packets, CPU s of the event loop, virtual µs, frames on the wire)."""
    topo = erack(gpus=8, planes=1, radix=8, rate_gbps=400, delay_us=0.0)
    fab, control = build(topo, link_layer=link_layer)
    eids = sorted(ep.eid for ep in topo.endpoints.values())
    out, _wall, cpu = run_plan(fab, control, pattern_plan("all_reduce", eids, size, 1, "ring"))
    m = summarize(out.result).summary
    assert m["complete"] and m["packets_lost"] == 0, m
    frames = sum(getattr(sw.ports[p], "tx_packets", 0) for sw in fab.switches.values() for p in sw.ports)
    control.close()
    return fab.executions(), cpu, m["duration_s"] * 1e6, frames


def link_layer_cost(size: int, rounds: int) -> None:
    """Link layer absent vs LLR on at FER 0, rounds alternating after a warm-up pair; medians."""
    llr = LinkLayerConfig.parse({"llr": True})
    link_layer_round(size, None)
    link_layer_round(size, llr)
    rows: dict[str, list[tuple[int, float, float, int]]] = {"absent": [], "llr": []}
    for _ in range(rounds):
        rows["absent"].append(link_layer_round(size, None))
        rows["llr"].append(link_layer_round(size, llr))
    rate = {k: median(r[0] / r[1] for r in v) for k, v in rows.items()}
    print(f"link layer: ring all-reduce {size >> 10} KiB on ERack+ 8 GPUs × 1 plane at 400 Gbit/s, {rounds} "
          f"alternating rounds after a warm-up pair")
    for k, v in rows.items():
        print(f"  {k:16s} : {rate[k]:10,.0f} pipeline pkt/s CPU (median), completion {v[0][2]:.2f} µs virtual, "
              f"{v[0][3]:,} frames sent by the switch")
    print(f"  LLR at FER 0     : {rate['llr'] / rate['absent']:.3f}× the simulation speed without the link layer; "
          f"completion ×{rows['llr'][0][2] / rows['absent'][0][2]:.4f} (shim bytes and ACK frames on the wire)")


def p4sim_case(packets: int) -> None:
    """ns-3 P4sim's one-switch IPv4 forwarding case: h1 -> s1 (basic_l3.p4) -> h2, 1000-byte frames."""
    topo = line(1, rate_gbps=10, delay_us=0.0)
    frame_len = 1000
    fab = VirtualFabric(topo, FabricConfig(), HostConfig(mtu=frame_len - 14))  # MTU excludes the Ethernet header
    sw = fab.switches["s1"]
    program = load_program((ROOT / "p4src" / "basic_l3.p4").read_bytes())
    sw.commit(program)
    lpm = program.state.tables["MyIngress.ipv4_lpm"]
    for ln in topo.links:
        host, port = (ln.a, ln.b) if ln.b.owner == "s1" else (ln.b, ln.a)
        itf = next(ep for ep in topo.endpoints.values() if ep.host == host.owner).interfaces[ln.plane]
        dst = int.from_bytes(bytes(int(x) for x in itf.ipv4.split(".")), "big")
        lpm.insert(TableEntry(match=(Lpm(dst, 32),), action=ActionCall(
            "MyIngress.ipv4_forward", (int(itf.mac.replace(":", ""), 16), port.number))))
    lengths: set[int] = set()
    receive = sw.receive
    channels: list[Any] = [nic.channel for nic in fab.endpoints.nics.values()]  # vfabric Channels (tx_packets)

    def tap(port: int, frame: bytes) -> None:  # sees the first frames, then gets out of the way
        lengths.add(len(frame))
        if len(lengths) > 1 or sum(ch.tx_packets for ch in channels) >= 64:
            del sw.receive  # type: ignore[method-assign]  # the class's method again
        receive(port, frame)

    sw.receive = tap  # type: ignore[method-assign]  # every arrival goes through `self.receive`
    out_frames: list[bytes] = []
    out_channels = {id(ch): (ch, ch.deliver) for ch in sw.ports.values()}

    def out_tap(key: int):  # keeps the first frames that left the switch, then gets out of the way
        def deliver(port: int, frame: bytes) -> None:
            out_frames.append(frame)
            if len(out_frames) >= 8:
                for ch, to_host in out_channels.values():
                    ch.deliver = to_host
            out_channels[key][1](port, frame)
        return deliver

    for key, (ch, _) in out_channels.items():
        ch.deliver = out_tap(key)
    # where arrivals are accounted ahead in batches (Channel.early), the same tap sits on that path
    eps = fab.endpoints
    defer_arrival = eps.defer_arrival

    def early_tap(at, frame: bytes, arrive: int, place: int) -> bool:
        out_frames.append(frame)
        if len(out_frames) >= 8:
            for ch in fab.to_hosts:
                if ch.early is early_tap:
                    ch.early = defer_arrival
        return defer_arrival(at, frame, arrive, place)

    eps.defer_arrival = early_tap  # type: ignore[method-assign,assignment]
    payload = fab.endpoints.payload
    eids = sorted(ep.eid for ep in topo.endpoints.values())
    plan = pattern_plan("broadcast", eids, packets * payload, 1, "ring", root=eids[0])
    control = ControlPlane(fab, make_policy("ecmp"))  # no controller: the route table is static
    out, wall, cpu = run_plan(fab, control, plan)
    m = summarize(out.result).summary
    assert m["complete"] and m["packets_lost"] == 0 and sw.drops == dict.fromkeys(sw.drops, 0), (m, sw.drops)
    assert lengths == {frame_len}, lengths
    # what left the switch: TTL decremented and the IPv4 checksum the program recomputed is valid
    assert out_frames and all(f[22] == 63 and csum16(f[14:34]) == 0 for f in out_frames), out_frames[:1]
    n = sw.executions
    print(f"one switch (basic_l3.p4), 2 hosts, {n:,} packets of {frame_len} B at 10 Gbit/s, "
          f"virtual {m['duration_s'] * 1e3:.2f} ms:")
    print(f"  vfabric          : {n / cpu:10,.0f} pkt/s CPU   {n / wall:10,.0f} pkt/s wall")
    print(f"  vs ns-3 P4sim    : {n / wall / P4SIM_PPS:.1f}× (wall) {n / cpu / P4SIM_PPS:.1f}× (CPU) its "
          f"~{P4SIM_PPS:,} pkt/s per wall-clock second ({P4SIM_SOURCE})   goal ≥ 10×")


def frames_note(fab) -> str:
    eps = fab.endpoints
    return (f"IP MTU {eps.config.mtu} ({eps.payload} B payload, {eps.payload + eps.fmt.l3_overhead + 14} B "
            "frames)")


def scale_erack(mtu: int, workers: int, gpus: int = 64) -> dict:
    t0 = time.perf_counter()
    topo = erack(gpus=gpus, planes=8, radix=64, rate_gbps=400, delay_us=0.0)
    fab, control = build(topo, mtu=mtu)
    print(f"ERack+ {gpus}×8: {len(topo.switches)} switches, {len(topo.links)} links, {frames_note(fab)}", flush=True)
    bring = time.perf_counter() - t0
    eids = sorted(ep.eid for ep in topo.endpoints.values())
    plan = pattern_plan("all_reduce", eids, 16 << 20, 1, "ring", planes=8, slices=8)
    w0 = time.perf_counter()
    out, loop_wall, cpu = run_plan(fab, control, plan, wall_s=1800, show=True, workers=workers)
    wall = time.perf_counter() - w0
    m = summarize(out.result)
    control.close()
    rec = m.records[0]
    n = fab.executions()
    print(f"\nERack+ {gpus}×8 ring all-reduce 16 MiB @400G: bring-up {bring:.1f} s, run {wall:.1f} s wall "
          f"(goal ≤ 180 s; event loop {loop_wall:.1f} s wall, {cpu:.1f} s CPU), {out.stopped_by}, virtual {rec['time_s'] or 0:.6f} s, "
          f"busbw {rec['busbw_GBps'] or 0:.1f} GB/s, {n:,} pipeline packets ({n / loop_wall:,.0f}/s wall, "
          f"{n / cpu:,.0f}/s CPU over {cpu:.0f} s CPU of {out.stats.processes} process(es)), {out.stats.events:,} events, RSS {rss_gib():.2f} GiB, {load_note()}")
    return {"wall": wall, "cpu": cpu, "records": m.records, "summary": m.summary, "executions": n,
            "events": out.stats.events}


#: The UPN run's per-port queue depth: 128 frames of 4154 B = 532 KB per 200 Gbit/s port (21 µs of
#: line rate). Shallow-buffer switch chips share one on-chip buffer among their ports: Tomahawk 5 (51.2 Tbit/s)
#: has 165 MB, an even share of 645 KB per 200 Gbit/s of capacity; so 532 KB is below what one port of such a
#: chip can hold under dynamic thresholds. BMv2's default of 64 packets (266 KB at this MTU) is shallower.
UPN_QUEUE_DEPTH = 128


def scale_upn(wall_s: float, mtu: int, workers: int, algorithm: str, queue_depth: int, transport: str,
              gpus: int = 512, radix: int = 128, kib: int = 64) -> dict:
    t0 = time.perf_counter()
    topo = upn(gpus=gpus, planes=4, radix=radix, rate_gbps=200, delay_us=0.0)
    fab, control = build(topo, mtu=mtu, queue_depth=queue_depth, transport=transport)
    bring = time.perf_counter() - t0
    eps = fab.endpoints
    print(f"UPN {gpus}: {len(topo.switches)} switches, {len(topo.links)} links, bring-up {bring:.1f} s, "
          f"{frames_note(fab)}, RSS {rss_gib():.2f} GiB", flush=True)
    print(f"  workload: all-to-all {kib} KiB per pair, algorithm {algorithm}, transport {eps.config.transport}, "
          f"reaction {eps.config.reaction}, queue depth {queue_depth} frames per port "
          f"({queue_depth * (eps.payload + eps.fmt.l3_overhead + 14) / 1e3:.0f} kB), policy ecmp", flush=True)
    eids = sorted(ep.eid for ep in topo.endpoints.values())
    params: dict[str, Any] = {"seed": 1} if algorithm == "direct" else {}
    plan = pattern_plan("all_to_all", eids, kib * 1024 * gpus, 1, algorithm, planes=4, **params)
    c0 = cpu_seconds()
    w0 = time.perf_counter()
    out, loop_wall, cpu = run_plan(fab, control, plan, wall_s=wall_s, show=True, workers=workers)
    wall = time.perf_counter() - w0
    m = summarize(out.result)
    control.close()
    rec = m.records[0]
    planned = sum(f.npkts for f in out.result.flows)
    delivered = sum(f.delivered for f in out.result.flows)
    lost = m.summary.get("packets_lost")
    drops: dict[str, int] = {}
    for sw in fab.switches.values():
        for reason, count in sw.drops.items():
            drops[reason] = drops.get(reason, 0) + count
    total = bring + wall
    print(f"\nUPN {gpus} all-to-all {kib} KiB/pair ({algorithm}, transport {eps.config.transport}, queue depth "
          f"{queue_depth}): {out.stopped_by}; delivered {delivered:,} of {planned:,} data frames "
          f"({delivered / max(planned, 1):.2%}), lost {lost}, switch drops "
          f"{ {k: v for k, v in drops.items() if v} or 0}, retransmitted {m.summary.get('retransmitted')} "
          f"(timeouts {m.summary.get('timeouts')}), complete {m.summary.get('complete')}")
    print(f"  wall: bring-up {bring:.1f} s + run {wall:.1f} s = {total:.1f} s = {total / 60:.1f} min "
          f"(goal ≤ 15 min; event loop {loop_wall:.1f} s); CPU: event loop {cpu:.0f} s of "
          f"{out.stats.processes} process(es), this process + reaped workers {cpu_seconds() - c0:.0f} s in the run")
    print(f"  virtual: collective time {rec['time_s'] or 0:.6f} s, {out.stats.now_ns / 1e9:.6f} s reached; "
          f"{fab.executions():,} pipeline packets ({fab.executions() / loop_wall:,.0f}/s wall, "
          f"{fab.executions() / max(cpu, 1e-9):,.0f}/s CPU), {out.stats.events:,} events")
    print(f"  memory: this process's RSS {rss_gib():.2f} GiB (goal ≤ 8 GiB of all processes; the PSS line above "
          f"counts all); {load_note()}")
    return {"wall": total, "cpu": cpu, "records": m.records, "summary": m.summary, "executions": fab.executions(),
            "events": out.stats.events}


def cpu_seconds() -> float:
    """CPU seconds of this process and its reaped children (the partition workers)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


# ------------------------------------------------------------------------------------------ MPI ranks

def ranks_spec(gpus: int, planes: int, size_kib: int) -> dict[str, Any]:
    """A multi-plane ERack+ all-to-all, flows pinned to their plane: `planes` independent partitions."""
    return {"name": f"bench-ranks-erack{gpus}x{planes}", "clock": "virtual", "seed": 1, "repetitions": 1,
            "topology": {"name": "erack", "params": {"gpus": gpus, "planes": planes, "radix": max(8, 2 * gpus)}},
            "virtual": {"time_limit_s": 0.05, "backend": "mpi"},
            "traffic": {"pattern": "all_to_all", "size": f"{size_kib}KiB", "params": {"planes": planes}},
            "policies": [{"name": "ecmp"}]}


def coupled_side(gpus: int, radix: int, algorithm: str, planes: int = 4) -> None:
    """One side of the coupled comparison, in this process or (under mpiexec) on the ranks it is given: the
    UPN all-to-all of `--scale upn` (4 planes at 200 Gbit/s, 0-µs links, RoCEv2 MTU, 128-frame queues,
    selective repeat with the scale timers, 64 KiB per pair) — on MPI ranks with coupled partitions
    (`virtual.partition: coupled`: vfabric/cut.py chooses the cut). Rank 0 prints one JSON line: wall times,
    how it was simulated, window counts, and a digest of every flow record, link counter and switch drop."""
    import hashlib
    import json

    from vfabric import partition
    from vfabric.mpi import world

    comm = world()
    rank = comm.Get_rank() if comm is not None else 0
    t0 = time.perf_counter()
    topo = upn(gpus=gpus, planes=planes, radix=radix, rate_gbps=200, delay_us=0.0)
    fab, control = build(topo, mtu=ROCE_PATH_MTU_IP, queue_depth=UPN_QUEUE_DEPTH, transport="sr")
    bring = time.perf_counter() - t0
    eids = sorted(ep.eid for ep in topo.endpoints.values())
    params: dict[str, Any] = {"seed": 1} if algorithm == "direct" else {}
    plan = pattern_plan("all_to_all", eids, 64 * 1024 * gpus, 1, algorithm, planes=planes, **params)
    limits = VirtualLimits(time_limit_s=0.05, wall_limit_s=7200, workers=1, backend="mpi" if comm else "fork",
                           comm=comm, partition="coupled" if comm else "auto")
    run = VirtualRun(fab, control, limits)
    w0 = time.perf_counter()
    out = run.run(plan, HostConfig(flow_rate_bps=400e9))
    wall = time.perf_counter() - w0
    control.close()
    if rank != 0:
        return
    digest = hashlib.sha256()
    for f in out.result.flows:
        digest.update(repr(sorted(vars(f).items())).encode())
    for index, link in enumerate(fab.links):
        digest.update(repr((link.lost, [(ch.tx_packets, ch.tx_bytes) for ch in partition._channels(fab, index)]))
                      .encode())
    for name, sw in sorted(fab.switches.items()):
        digest.update(repr((name, sorted(sw.drops.items()), sw.received, sw.executions)).encode())
    ws = run.window_stats
    print("COUPLED " + json.dumps({
        "bring_up_s": round(bring, 2), "loop_s": round(wall, 2), "note": out.partitions, "stopped": out.stopped_by,
        "virtual_us": round(out.result.duration_s * 1e6, 3), "executions": fab.executions(),
        "delivered": sum(f.delivered for f in out.result.flows), "planned": sum(f.npkts for f in out.result.flows),
        "events": out.stats.events, "cpu_s": round(out.stats.cpu_s, 2), "windows": ws.windows if ws else 0, "sync_s": round(ws.sync_s, 2) if ws else 0.0,
        "frames_exchanged": ws.frames_out if ws else 0, "digest": digest.hexdigest()}), flush=True)


def _run_child(cmd: list[str], tag: str, cwd: Path, env: dict[str, str] | None = None
               ) -> tuple[list[dict[str, Any]], float, str]:
    """One side of a side-by-side comparison in its own process: its `tag` lines (JSON after the tag), the
    command's wall time, and why it failed (empty when it did not: exit 0 and at least one such line)."""
    import subprocess

    t0 = time.perf_counter()
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd)
    wall = time.perf_counter() - t0
    rows = [json.loads(ln[len(tag) + 1:]) for ln in res.stdout.splitlines() if ln.startswith(tag + " ")]
    if res.returncode != 0 or not rows:
        return rows, wall, f"failed (exit {res.returncode}): {(res.stderr or res.stdout).strip()[-800:]}"
    return rows, wall, ""


def coupled_compare(ranks: int, gpus: int, radix: int, algorithm: str, planes: int = 4) -> None:
    """`coupled_side` in one process, then on `ranks` MPI ranks, side by side in this run."""
    from vfabric.mpi import mpiexec, oversubscribe_flags

    launcher = mpiexec()
    if launcher is None:
        print("MPI: no mpiexec (make setup installs the mpich wheel): nothing measured")
        return
    print(f"coupled partitions: UPN {gpus} (radix {radix}, {planes} plane(s)) all-to-all 64 KiB per pair, {algorithm}, "
          f"transport sr, IP MTU {ROCE_PATH_MTU_IP}; {load_note()}", flush=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PMI_SIZE", "PMI_RANK", "OMPI_COMM_WORLD_SIZE")}
    env["PYTHONPATH"] = str(ROOT)
    side = [sys.executable, str(Path(__file__)), "--coupled-side", str(gpus), "--coupled-radix", str(radix),
            "--upn-algorithm", algorithm, "--coupled-planes", str(planes)]
    got = {}
    for n, cmd in ((1, side), (ranks, [launcher, "-n", str(ranks), *oversubscribe_flags(launcher), *side])):
        rows, total, failed = _run_child(cmd, "COUPLED", ROOT, env)
        if failed:
            print(f"  {n} rank(s): {failed}")
            return
        r = got[n] = rows[-1]
        r["total_s"] = total
        print(f"  {n} rank(s): {total:.1f} s wall for the command (bring-up {r['bring_up_s']:.1f} s, event loop "
              f"{r['loop_s']:.1f} s; {r['events']:,} events, {r['cpu_s']:.1f} s CPU of all ranks' event loops), {r['stopped']}, {r['delivered']:,} of {r['planned']:,} data frames delivered, "
              f"collective {r['virtual_us']:.1f} µs virtual, {r['executions']:,} pipeline packets; {r['note']}"
              + (f"; {r['windows']:,} windows, {r['frames_exchanged']:,} boundary frames, {r['sync_s']:.2f} s in "
                 f"the exchanges (rank 0)" if n > 1 else ""), flush=True)
    one, many = got[1], got[ranks]
    print(f"  ratio 1 process / {ranks} ranks: {one['total_s'] / many['total_s']:.2f}x (command), "
          f"{one['loop_s'] / many['loop_s']:.2f}x (event loop); records identical: "
          f"{'yes' if one['digest'] == many['digest'] else 'NO'}; {load_note()}", flush=True)


def ranks_compare(ranks: int, spec: dict[str, Any], what: str) -> bool:
    """One process against `ranks` MPI ranks on the same spec, side by side in this run: wall time of the
    whole command (start, bring-up on every rank, simulation, merge, files) and of the event loop, and the
    records compared byte for byte."""
    import json
    import subprocess
    import tempfile

    import yaml

    from vfabric.mpi import mpiexec

    if mpiexec() is None:
        print("MPI: no mpiexec (make setup installs the mpich wheel): nothing measured")
        return False
    print(f"MPI ranks: {spec['name']}: {what}; {load_note()}", flush=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PMI_SIZE", "PMI_RANK", "OMPI_COMM_WORLD_SIZE")}
    env["PYTHONPATH"] = str(ROOT)
    with tempfile.TemporaryDirectory(prefix="bench-ranks-") as tmp:
        path = Path(tmp) / "spec.yaml"
        path.write_text(yaml.safe_dump(spec))
        walls, loops, records = {}, {}, {}
        for n in (1, ranks):
            out = Path(tmp) / f"r{n}"
            cmd = [sys.executable, "-m", "ethlab.cli", "run", str(path), "--out", str(out), "--ranks", str(n)]
            t0 = time.perf_counter()
            res = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
            walls[n] = time.perf_counter() - t0
            if res.returncode != 0:
                print(f"  {n} rank(s): failed: {(res.stderr or res.stdout).strip()[-500:]}")
                return False
            run_dir = next(out.glob("runs/*/rep0"))
            v = json.loads((run_dir / "switch.json").read_text())["virtual"]
            loops[n] = v["wall_s"]
            records[n] = [(run_dir / f).read_bytes() for f in ("metrics.json", "flows.csv", "links.csv")]
            summary = json.loads(records[n][0])["summary"]
            print(f"  {n} rank(s): {walls[n]:.1f} s wall for the command, event loop {v['wall_s']:.1f} s, "
                  f"{v['pipeline_packets']:,} pipeline packets, complete {summary.get('complete')}, "
                  f"retransmitted {summary.get('retransmitted')}; {v['simulated_by']}", flush=True)
        same = records[1] == records[ranks]
        print(f"  ratio 1 process / {ranks} ranks: {walls[1] / walls[ranks]:.2f}x (command), "
              f"{loops[1] / loops[ranks]:.2f}x (event loop); records byte-identical: {same}; {load_note()}",
              flush=True)
    return same


def sync_cost(ranks: int, windows: int) -> None:
    """The synchronisation of one window, timed under mpiexec on empty windows."""
    import subprocess

    from vfabric.mpi import mpiexec, oversubscribe_flags

    launcher = mpiexec()
    if launcher is None:
        return
    env = {k: v for k, v in os.environ.items() if k not in ("PMI_SIZE", "PMI_RANK", "OMPI_COMM_WORLD_SIZE")}
    env["PYTHONPATH"] = str(ROOT)
    cmd = [launcher, "-n", str(ranks), *oversubscribe_flags(launcher), sys.executable, str(Path(__file__)),
           "--sync-windows", str(windows)]
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    print(res.stdout.strip() or res.stderr.strip()[-500:])


def sync_windows(windows: int) -> None:
    """Under mpiexec: what one window's synchronisation costs with nothing in it — the coupled engine's own
    exchange (vfabric/window.py `exchange`: non-blocking alltoall of the sizes, then alltoallv of each rank's
    pickled empty boundary lists and its news: next event time, settled flows, limits). Rank 0 prints the mean per
    window, the slowest rank's."""
    from mpi4py import MPI

    from vfabric.window import exchange

    comm = MPI.COMM_WORLD
    size = comm.Get_size()
    for w in range(100):  # warm-up
        exchange(comm, [([], (w, 0, False, None))] * size)
    comm.Barrier()
    t0 = time.perf_counter()
    for w in range(windows):
        got = exchange(comm, [([], (w, 0, False, None))] * size)
        min(n[0] for _b, n in got)
    dt = time.perf_counter() - t0
    worst = comm.reduce(dt, op=MPI.MAX, root=0)
    if comm.Get_rank() == 0 and worst is not None:
        print(f"  synchronisation on {size} ranks, {windows} empty windows (the coupled engine's exchange: "
              f"non-blocking alltoall of sizes, then alltoallv of the pickled empty boundary lists and news): {1e6 * worst / windows:.1f} µs "
              f"per window; {load_note()}")


def records_digest(run: dict) -> str:
    """sha256 of a run's records and summary, to compare runs of two trees byte for byte."""
    text = json.dumps([run["records"], run["summary"]], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def baseline_compare(base: Path, rounds: int) -> int:
    """This tree against `base`, side by side: each round runs the same scale runs (this command's options) once
    per tree, each in a fresh process (`--tree`: the same bench code on that tree's modules), the order
    alternating per round; medians per side."""

    argv = sys.argv[1:]
    for flag in ("--baseline-tree", "--baseline-rounds"):
        while flag in argv:
            k = argv.index(flag)
            del argv[k:k + 2]
    trees = {"baseline": base.resolve(), "this tree": ROOT}
    got: dict[str, list[dict]] = {}
    print(f"side by side: this tree {ROOT} vs baseline {trees['baseline']}, {rounds} round(s); {load_note()}",
          flush=True)
    for k in range(rounds):
        order = list(trees.items()) if k % 2 == 0 else list(reversed(trees.items()))
        for side, tree in order:
            cmd = [sys.executable, str(Path(__file__).resolve()), *argv, "--scale-only", "--tree", str(tree),
                   "--child-result"]
            rows, _wall, failed = _run_child(cmd, "RESULT", tree)
            if failed:
                print(f"  {side}: {failed}")
                return 1
            for r in rows:
                got.setdefault(f"{r['name']}\0{side}", []).append(r)
                print(f"  round {k + 1} {side:9s}: {r['name']}: {r['wall']:.1f} s wall, {r['cpu']:.1f} s event-loop CPU, "
                      f"{r['executions']:,} pipeline packets, {r['events']:,} events; {load_note()}", flush=True)
    same_all = True
    for name in dict.fromkeys(key.split("\0")[0] for key in got):
        b, t = got[f"{name}\0baseline"], got[f"{name}\0this tree"]
        bw, tw = median(r["wall"] for r in b), median(r["wall"] for r in t)
        bc, tc = median(r["cpu"] for r in b), median(r["cpu"] for r in t)
        same = {r["records"] for r in b} == {r["records"] for r in t} and len({r["records"] for r in b}) == 1
        same_all = same_all and same
        print(f"{name}: wall {bw:.1f} s -> {tw:.1f} s ({bw / tw:.2f}x), event-loop CPU {bc:.1f} s -> {tc:.1f} s "
              f"({bc / tc:.2f}x); CPU per pipeline packet {1e6 * bc / b[0]['executions']:.1f} µs -> "
              f"{1e6 * tc / t[0]['executions']:.1f} µs; events {b[0]['events']:,} -> {t[0]['events']:,}; "
              f"records byte-identical: {'yes' if same else 'NO'}")
    return 0 if same_all else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", choices=["erack", "upn", "all"], default=None)
    ap.add_argument("--size-kib", type=int, default=2048, help="ring all-reduce size for the pipeline-rate part")
    ap.add_argument("--rounds", type=int, default=5,
                    help="rounds of the pipeline-rate part after its warm-up round (the median round's ratio)")
    ap.add_argument("--p4sim-packets", type=int, default=30000, help="packets of the ns-3 P4sim case")
    ap.add_argument("--upn-wall-s", type=float, default=900.0, help="wall-clock limit of the UPN 512 run")
    ap.add_argument("--scale-mtu", type=int, default=ROCE_PATH_MTU_IP,
                    help="IP MTU of the scale runs (default: RoCEv2's 4096-byte path MTU, 4140; 1500 for "
                         "Ethernet-MTU frames)")
    ap.add_argument("--upn-algorithm", choices=["pairwise", "direct"], default="pairwise",
                    help="all-to-all algorithm of the UPN run (pairwise: shifted exchange, one piece in flight per "
                         "rank and plane; direct: every piece posted at once)")
    ap.add_argument("--upn-queue-depth", type=int, default=UPN_QUEUE_DEPTH,
                    help="per-port queue depth (frames) of the UPN run's switches")
    ap.add_argument("--upn-transport", choices=["none", "sr", "rc-gbn"], default="sr",
                    help="endpoint transport of the UPN run (default sr: selective repeat retransmits what the "
                         "queues drop, with µs-scale timers, so every byte arrives; none: loss is counted, not "
                         "repaired)")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                    help="processes for the scale runs' independent partitions (planes; vfabric/partition.py); "
                         "1 = one process")
    ap.add_argument("--ranks", type=int, default=None,
                    help="only compare one process with N MPI ranks (independent planes) and time empty windows")
    ap.add_argument("--ranks-gpus", type=int, default=16, help="GPUs of the --ranks ERack+ fabric")
    ap.add_argument("--ranks-planes", type=int, default=4, help="planes (independent partitions) of that fabric")
    ap.add_argument("--ranks-size-kib", type=int, default=8192, help="all-to-all bytes per pair of the --ranks run")
    ap.add_argument("--coupled-radix", type=int, default=128,
                    help="switch radix of the --ranks UPN (coupled partitions); 16 with --upn-gpus 64 keeps 2 tiers")
    ap.add_argument("--coupled-planes", type=int, default=4,
                    help="planes of the --ranks UPN (1 with --upn-algorithm direct: the cut goes through a plane)")
    ap.add_argument("--coupled-only", action="store_true",
                    help="with --ranks: skip the independent-planes ERack+ comparison")
    ap.add_argument("--coupled-side", type=int, default=None, help=argparse.SUPPRESS)  # one side of --ranks
    ap.add_argument("--sync-windows", type=int, default=None, help=argparse.SUPPRESS)  # the MPI side of --ranks
    ap.add_argument("--link-layer", action="store_true",
                    help="only the link layer's cost: absent vs LLR on at FER 0, side by side")
    ap.add_argument("--pipeline", choices=["python", "native", "both"], default=None,
                    help="the switches' pipeline for the scale runs (both: each scale run once per pipeline, side "
                         "by side, wall-time ratio and whether the records are identical)")
    ap.add_argument("--scale-only", action="store_true", help="skip parts 1 and 2")
    ap.add_argument("--upn-gpus", type=int, default=512, help="GPUs of the UPN run (512; fewer where time is short)")
    ap.add_argument("--upn-radix", type=int, default=128,
                    help="switch radix of the UPN run (128; with fewer GPUs, e.g. 64 at 128 GPUs keeps two tiers)")
    ap.add_argument("--upn-kib", type=int, default=64, help="all-to-all KiB per pair of the UPN run")
    ap.add_argument("--erack-gpus", type=int, default=64, help="GPUs per plane of the ERack+ run")
    ap.add_argument("--baseline-tree", type=Path, default=None,
                    help="another checkout (e.g. a git worktree of an earlier commit): run the scale runs on it and "
                         "on this tree, alternating in fresh processes, and compare")
    ap.add_argument("--baseline-rounds", type=int, default=1, help="rounds of --baseline-tree (medians)")
    ap.add_argument("--tree", type=Path, default=None, help=argparse.SUPPRESS)  # read by _tree() at import
    ap.add_argument("--child-result", action="store_true", help=argparse.SUPPRESS)  # a --baseline-tree child
    a = ap.parse_args()
    if a.baseline_tree is not None:
        if a.scale is None:
            ap.error("--baseline-tree compares the scale runs: give --scale erack|upn|all")
        if not (a.baseline_tree / "vfabric" / "events.py").is_file():
            ap.error(f"--baseline-tree {a.baseline_tree}: not an ethlab checkout (no vfabric/events.py)")
        return baseline_compare(a.baseline_tree, a.baseline_rounds)
    if a.coupled_side is not None:
        coupled_side(a.coupled_side, a.coupled_radix, a.upn_algorithm, a.coupled_planes)
        return 0
    if a.sync_windows is not None:
        sync_windows(a.sync_windows)
        return 0
    if a.ranks is not None:
        if a.ranks < 2:
            ap.error(f"--ranks must be >= 2 (got {a.ranks})")
        if not a.coupled_only:
            ranks_compare(a.ranks, ranks_spec(a.ranks_gpus, a.ranks_planes, a.ranks_size_kib),
                          f"ERack+ all-to-all {a.ranks_size_kib} KiB per pair, {a.ranks_planes} independent planes")
        coupled_compare(a.ranks, a.upn_gpus, a.coupled_radix, a.upn_algorithm, a.coupled_planes)
        sync_cost(a.ranks, 5000)
        return 0
    if a.link_layer:
        link_layer_cost(a.size_kib << 10, a.rounds)
        return 0
    if not a.scale_only:
        # the ratio's goal (>= 0.7x) is set for the Python pipeline, the reference: parts 1 and 2 run on it
        # unless --pipeline native asks for the C one
        first = "native" if a.pipeline == "native" else "python"
        with pipeline_choice(first):
            print(f"parts 1 and 2 on the {first} pipeline", flush=True)
            pipeline_rate(a.size_kib << 10, a.rounds)
            p4sim_case(a.p4sim_packets)
    if a.scale is not None:
        print(f"scale runs: IP MTU {a.scale_mtu}" + (" = RoCEv2 path MTU 4096 (RoCEv2 fabrics run 4096-byte "
              "payloads; the topologies say nothing about frame size)" if a.scale_mtu == ROCE_PATH_MTU_IP else ""))
    kinds = ["python", "native"] if a.pipeline == "both" else [a.pipeline]
    runs: dict[tuple[str, str | None], dict] = {}
    for kind in kinds:
        with pipeline_choice(kind):
            if kind:
                print(f"== pipeline {kind}", flush=True)
            if a.scale in ("erack", "all"):
                runs[(f"ERack+ {a.erack_gpus}×8 ring all-reduce", kind)] = scale_erack(a.scale_mtu, a.workers,
                                                                                   a.erack_gpus)
            if a.scale in ("upn", "all"):
                runs[(f"UPN {a.upn_gpus} all-to-all", kind)] = scale_upn(
                    a.upn_wall_s, a.scale_mtu, a.workers, a.upn_algorithm, a.upn_queue_depth, a.upn_transport,
                    a.upn_gpus, a.upn_radix, a.upn_kib)
    if a.child_result:  # one line per run for the parent of a --baseline-tree comparison
        for (name, _kind), r in runs.items():
            print("RESULT " + json.dumps({"name": name, "wall": r["wall"], "cpu": r["cpu"], "events": r["events"],
                                          "executions": r["executions"], "records": records_digest(r)}))
    if a.pipeline == "both":
        for name in dict.fromkeys(n for n, _ in runs):
            py, na = runs[(name, "python")], runs[(name, "native")]
            same = py["records"] == na["records"] and py["summary"] == na["summary"]
            print(f"{name}: python {py['wall']:.1f} s, native {na['wall']:.1f} s wall -> "
                  f"{py['wall'] / na['wall']:.2f}x; event-loop CPU {py['cpu']:.1f} s vs {na['cpu']:.1f} s -> "
                  f"{py['cpu'] / max(na['cpu'], 1e-9):.2f}x; records identical: {'yes' if same else 'NO'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
