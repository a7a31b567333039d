"""The entry points the CLI and the experiment runner call: plan a pattern or a trace, replay it on a set
of ports (a fabric's hosts or a veth lab), write metrics, show a table."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich.table import Table

from traffic.collectives import make_schedule
from traffic.engine import Engine, NicLinkLayer
from traffic.metrics import Metrics, summarize, write_all
from traffic.records import HostConfig, NicAddress, PlannedCollective, RunResult
from traffic.schedule import apply_offsets


def pattern_plan(pattern: str, endpoints: Sequence[int], size: int, iterations: int = 1,
                 algorithm: str | None = None, gap_s: float = 0.0,
                 rank_offsets: dict[int, float] | None = None, **params: Any) -> list[PlannedCollective]:
    """One collective on `endpoints`, repeated `iterations` times back to back (with a compute gap)."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"message size must be at least 1 byte, got {size!r}")
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
        raise ValueError(f"iterations must be at least 1, got {iterations!r}")
    if not gap_s >= 0:
        raise ValueError(f"the gap between iterations must not be negative, got {gap_s!r}")
    try:
        sched = make_schedule(pattern, list(endpoints), size, algorithm, **params)
    except TypeError as err:  # a parameter of the wrong type (slices=x) deep inside an algorithm
        raise ValueError(f"{pattern}: bad parameter value ({err})") from None
    if rank_offsets:
        sched = apply_offsets(sched, rank_offsets)
    plan = []
    for it in range(iterations):
        after = ((sched.kind, it - 1),) if it else ()
        plan.append(PlannedCollective(sched.kind, it, sched, after=after, delay_s=gap_s if it else 0.0))
    return plan


def ports_for_topology(topo: Any, netns_of: Callable[[str], str],
                       gateway_mac: Callable[[str, int], str | None] | None = None) -> dict[tuple[int, int], NicAddress]:
    """Engine ports for every endpoint plane of a `topologies.model.Topology`.

    `netns_of(host)` names the host's namespace (e.g. `Fabric.netns`); `gateway_mac(host, plane)` may give
    the MAC to send to (first-hop switch) when the data plane routes on IP and checks the destination MAC.
    """
    ports: dict[tuple[int, int], NicAddress] = {}
    for ep in topo.endpoints.values():
        for plane, iface in ep.interfaces.items():
            gw = gateway_mac(ep.host, plane) if gateway_mac else None
            ports[(ep.eid, plane)] = NicAddress(netns_of(ep.host), iface.ifname, iface.mac, iface.ipv4, gw)
    return ports


def replay(plan: list[PlannedCollective], ports: dict[tuple[int, int], NicAddress],
           config: HostConfig, out_dir: str | Path | None = None,
           link: NicLinkLayer | None = None) -> tuple[RunResult, Metrics]:
    """Run the plan; write metrics.json, metrics.csv and flows.csv into `out_dir` when given. `link`: the link
    layer on the NIC ports (its counters are there after the run)."""
    with Engine(ports, config, link) as eng:
        result = eng.run(plan)
    metrics = write_all(out_dir, result) if out_dir is not None else summarize(result)
    return result, metrics


def _fmt(v: Any, scale: float = 1.0, digits: int = 3) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "NO"
    if isinstance(v, float):
        return f"{v * scale:.{digits}f}"
    return str(v)


def results_table(metrics: Metrics, title: str = "traffic results") -> Table:
    """One row per collective instance, nccl-tests columns first."""
    t = Table(title=title)
    cols = [("collective", "collective", 1), ("iter", "iteration", 1), ("ranks", "ranks", 1),
            ("size B", "size_bytes", 1), ("time ms", "time_s", 1e3), ("algbw GB/s", "algbw_GBps", 1),
            ("busbw GB/s", "busbw_GBps", 1), ("FCT p99 ms", "fct_p99_s", 1e3), ("lost", "packets_lost", 1),
            ("ECN %", "ecn_fraction", 100), ("reord", "reordered", 1), ("dup", "duplicates", 1),
            ("ok", "complete", 1)]
    for head, _, _ in cols:
        t.add_column(head, justify="right")
    for r in metrics.records:
        t.add_row(*[_fmt(r[key], scale) for _, key, scale in cols])
    s = metrics.summary
    t.caption = (f"step time p50 {_fmt(s['step_time_p50_s'], 1e3)} ms, p99 {_fmt(s['step_time_p99_s'], 1e3)} ms; "
                 f"loss {_fmt(s['loss_fraction'], 100)} %; ECN {_fmt(s['ecn_fraction'], 100)} %; "
                 f"rx socket drops {s['rx_socket_drops']}{'; TIMED OUT' if s['timed_out'] else ''}")
    return t
