"""Bring-up cost of a fabric, by phase, plus P4Runtime write throughput and peak memory.

    .venv/bin/python bench/bringup.py                        # erack 64x8 and upn 128x4 (defaults)
    .venv/bin/python bench/bringup.py --topo erack --param gpus=16 --param planes=4 --writes 2000
    .venv/bin/python bench/bringup.py --target bmv2   # erack 16x4 on p4exec, then on BMv2: ratios

Per topology: seconds per phase (compile, namespaces, switch nodes, links, host config, switch start,
connect, pipeline push, entries), entries installed, then on one switch of the running fabric: entries/s
written one Write per entry vs one batched Write (entries removed afterwards), and peak memory: the sum of the
switch processes' peak RSS (VmHWM) plus this process (controller + Mininet) peak RSS. Needs root.
`--baseline` first brings each topology up with every p4exec switch started from scratch (no fork server,
each compiling the pushed program itself), then as `ethlab up` does, and prints the ratios of the switch-start
and pipeline-push phases. Wall seconds and CPU seconds (this process and its descendants) are printed per
phase, with the load average: on a shared machine CPU seconds say more.
`--target bmv2` (or `both`) runs each topology on p4exec and then on BMv2 (simple_switch_grpc, programs by
p4c-bm2-ss; default topology erack --gpus 16 --planes 4) in the same run and prints p4exec / BMv2 ratios.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import yaml  # noqa: E402
from p4.v1 import p4runtime_pb2 as pb  # noqa: E402

from controller.client import as_entity  # noqa: E402
from ethlab.bringup import running_fabric  # noqa: E402
from topologies.yaml_loader import load as load_topology  # noqa: E402

DEFAULTS = [("erack", {"gpus": 64, "planes": 8}), ("upn", {"gpus": 128, "planes": 4})]
SIDE_BY_SIDE = [("erack", {"gpus": 16, "planes": 4})]


def vm_hwm_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def write_throughput(conn, n: int) -> dict[str, float]:
    """Entries/s for n single-entry Writes and for one Write of n entries (ipv4_lpm /32 routes nobody uses)."""
    base = int(ipaddress.IPv4Address("172.16.0.0"))

    def entry(i: int) -> pb.TableEntry:
        return conn.table_entry("ipv4_lpm", {"hdr.ipv4.dstAddr": f"{ipaddress.IPv4Address(base + i)}/32"},
                                "ipv4_to_group", {"group_id": 1, "dst_index": 1})

    single = [entry(i) for i in range(n)]
    t0 = time.perf_counter()
    for e in single:
        conn.write([pb.Update(type=pb.Update.INSERT, entity=as_entity(e))])
    t_single = time.perf_counter() - t0
    batch = [entry(n + i) for i in range(n)]
    t0 = time.perf_counter()
    conn.write([pb.Update(type=pb.Update.INSERT, entity=as_entity(e)) for e in batch])
    t_batch = time.perf_counter() - t0
    conn.write([pb.Update(type=pb.Update.DELETE, entity=as_entity(e)) for e in single + batch])
    return {"entries": n, "single_per_s": round(n / t_single, 1), "batched_per_s": round(n / t_batch, 1)}


def bench(name: str, params: dict, writes: int, target: str, fork: bool = True) -> dict:
    topo = load_topology(name, **params)
    load0 = os.getloadavg()[0]
    t0 = time.monotonic()
    with running_fabric(topo, target=target, policy="ecmp", fork_switches=fork) as running:
        up_s = time.monotonic() - t0
        first = sorted(running.controller.state.connections)[0]
        tput = write_throughput(running.controller.connection(first), writes)
        procs = [running.fabric.switch(s.name).proc for s in topo.switches]
        switch_kib = sum(vm_hwm_kib(p.pid) for p in procs if p is not None)
        timings = dict(running.timings)
        cpu = dict(running.cpu_timings)
        entries = running.entries
    return {"topology": name, "params": params, "switches": len(topo.switches), "hosts": len(topo.hosts),
            "links": len(topo.links), "entries": entries, "bringup_s": round(up_s, 2), "phases_s": timings,
            "phases_cpu_s": cpu, "load_avg": [round(load0, 1), round(os.getloadavg()[0], 1)], "forked": fork,
            "writes": {"switch": first, **tput}, "switch_rss_peak_mib": round(switch_kib / 1024, 1),
            "controller_rss_peak_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--topo", default=None, help="one topology instead of the defaults")
    ap.add_argument("--param", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--writes", type=int, default=1000, help="entries per throughput measurement")
    ap.add_argument("--target", choices=("p4exec", "bmv2", "both"), default="p4exec",
                    help="bmv2 or both: p4exec and BMv2 side by side")
    ap.add_argument("--json", default=None, help="also write the results here")
    ap.add_argument("--baseline", action="store_true",
                    help="p4exec: first without the fork server (every switch from scratch), then with; ratios")
    args = ap.parse_args()
    targets = ["p4exec"] if args.target == "p4exec" else ["p4exec", "bmv2"]
    cases = DEFAULTS if len(targets) == 1 else SIDE_BY_SIDE
    if args.topo:
        cases = [(args.topo, {k: yaml.safe_load(v) for k, v in (p.split("=", 1) for p in args.param)})]
    results = []
    for name, params in cases:
        if args.baseline:
            base = bench(name, params, args.writes, "p4exec", fork=False)
            report(base, "p4exec, no fork server")
            fast = bench(name, params, args.writes, "p4exec")
            report(fast, "p4exec")
            results += [base, fast]
            for phase in ("switches", "pipeline"):
                print(f"{name} {params} {phase}: fork server / from scratch = wall "
                      f"{fast['phases_s'][phase] / max(base['phases_s'][phase], 1e-3):.2f} "
                      f"({fast['phases_s'][phase]:.2f} s vs {base['phases_s'][phase]:.2f} s), CPU "
                      f"{fast['phases_cpu_s'][phase] / max(base['phases_cpu_s'][phase], 1e-3):.2f} "
                      f"({fast['phases_cpu_s'][phase]:.1f} s vs {base['phases_cpu_s'][phase]:.1f} s)")
            continue
        pair = []
        for target in targets:
            r = bench(name, params, args.writes, target)
            report(r, target)
            pair.append(r)
        results += pair
        if len(pair) == 2:
            mine, ref = pair
            print(f"{name} {params} p4exec / BMv2: bring-up time {mine['bringup_s'] / ref['bringup_s']:.2f} "
                  f"({mine['bringup_s']} s vs {ref['bringup_s']} s; below 1: p4exec faster), batched writes "
                  f"{mine['writes']['batched_per_s'] / ref['writes']['batched_per_s']:.2f}, single writes "
                  f"{mine['writes']['single_per_s'] / ref['writes']['single_per_s']:.2f}, switch memory "
                  f"{mine['switch_rss_peak_mib'] / max(ref['switch_rss_peak_mib'], 0.1):.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


def report(r: dict, target: str) -> None:
    name, params = r["topology"], r["params"]
    phases = ", ".join(f"{k} {v:.2f}" for k, v in r["phases_s"].items())
    cpu = ", ".join(f"{k} {v:.1f}" for k, v in r.get("phases_cpu_s", {}).items())
    print(f"[{target}] {name} {params}: {r['switches']} switches, {r['hosts']} hosts, {r['links']} links, "
          f"{r['entries']} entries; up in {r['bringup_s']} s ({phases})")
    print(f"  CPU s per phase: {cpu}; load average {r['load_avg'][0]} -> {r['load_avg'][1]}")
    w = r["writes"]
    print(f"  P4Runtime writes on {w['switch']}: {w['single_per_s']} entries/s one per Write, "
          f"{w['batched_per_s']} entries/s batched ({w['entries']} entries each)")
    print(f"  peak memory: switches {r['switch_rss_peak_mib']} MiB total, controller+Mininet "
          f"{r['controller_rss_peak_mib']} MiB")

if __name__ == "__main__":
    sys.exit(main())
