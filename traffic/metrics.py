"""Metrics the way nccl-tests reports them, plus what the fabric did to the packets.

algbw = size / time, with `size` as nccl-tests defines it per collective (all-gather: the whole output
buffer; all-to-all: one rank's send buffer). busbw = algbw x factor, the factor that makes it comparable to
link speed: 2(n-1)/n for all-reduce, (n-1)/n for all-gather, reduce-scatter and all-to-all, 1 for
broadcast, reduce, send/recv and incast. Bandwidths are in GB/s (1e9 bytes/s) like nccl-tests prints them.
Percentiles use the nearest-rank method: p-th percentile = the ceil(p/100 x N)-th smallest value.

Transport columns: goodput = distinct payload bytes delivered to the receivers per second of the collective;
throughput = frame bytes the senders put on the wire (retransmissions included) per second; retransmitted =
packets sent again; spurious = retransmitted copies whose first copy had arrived (go-back-N resends what a
reorder made it discard); a collective is complete only when every flow delivered every byte, and its time
includes the recovery.
"""

from __future__ import annotations

import csv
import json
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from traffic.engine import CollectiveRecord, FlowRecord, RunResult


def bus_factor(kind: str, n: int) -> float:
    if kind == "all_reduce":
        return 2 * (n - 1) / n
    if kind in ("all_gather", "reduce_scatter", "all_to_all"):
        return (n - 1) / n
    return 1.0


def message_bytes(kind: str, size: int, n: int) -> int:
    """The byte count algbw divides by: nccl-tests' size; for incast every byte the sink receives."""
    return size * (n - 1) if kind == "incast" else size


def algbw_GBps(nbytes: int, seconds: float) -> float:
    return nbytes / seconds / 1e9 if seconds > 0 else 0.0


def busbw_GBps(kind: str, n: int, algbw: float) -> float:
    return algbw * bus_factor(kind, n)


def percentile(values: Sequence[float], p: float) -> float | None:
    """Nearest-rank percentile; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    k = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[min(k, len(ordered)) - 1]


def _ratio(a: int, b: int) -> float:
    return a / b if b else 0.0


def collective_record(c: CollectiveRecord, flows: Sequence[FlowRecord]) -> dict:
    """One metrics record for one collective instance."""
    n = len(c.ranks)
    t = c.time_s
    sent = sum(f.sent for f in flows)
    delivered = sum(f.delivered for f in flows)
    fcts = [f.fct_s for f in flows if f.fct_s is not None]
    alg = algbw_GBps(message_bytes(c.kind, c.size, n), t) if t else None
    extra = {} if c.inc is None else {"inc": dict(c.inc)}
    return {
        "collective": c.name,
        "iteration": c.iteration,
        "kind": c.kind,
        "algorithm": c.algorithm,
        "ranks": n,
        "size_bytes": c.size,
        "complete": bool(t) and all(f.complete for f in flows) and (c.inc is None or bool(c.inc["verified"])),
        "time_s": t,
        "algbw_GBps": alg,
        "busbw_GBps": busbw_GBps(c.kind, n, alg) if alg is not None else None,
        "flows": len(flows),
        "bytes_scheduled": sum(f.bytes for f in flows),
        "bytes_delivered": sum(f.delivered_bytes for f in flows),
        "packets_sent": sent,
        "packets_delivered": delivered,
        "packets_lost": sum(f.lost for f in flows),
        "loss_fraction": _ratio(sum(f.lost for f in flows), sent),
        "duplicates": sum(f.duplicates for f in flows),
        "reordered": sum(f.reordered for f in flows),
        "reorder_max": max((f.reorder_max for f in flows), default=0),
        "reorder_buffer_max": max((f.reorder_buffer for f in flows), default=0),
        "ecn_marked": sum(f.ce for f in flows),
        "ecn_fraction": _ratio(sum(f.ce for f in flows), delivered),
        "fct_p50_s": percentile(fcts, 50),
        "fct_p99_s": percentile(fcts, 99),
        "fct_max_s": max(fcts) if fcts else None,
        "rate_cuts": sum(f.rate_cuts for f in flows),
        "goodput_GBps": (sum(f.delivered_bytes for f in flows) / t / 1e9) if t else None,
        "throughput_GBps": (sum(f.sent_bytes for f in flows) / t / 1e9) if t else None,
        "retransmitted": sum(f.retransmitted for f in flows),
        "spurious_retransmissions": sum(f.spurious for f in flows),
        "timeouts": sum(f.timeouts for f in flows),
        "naks": sum(f.naks for f in flows),
        "trimmed": sum(f.trimmed for f in flows),
        "feedback_frames": sum(f.feedback_sent for f in flows),
        "failed_flows": sum(1 for f in flows if f.failed),
        "recovery_s": _recovery_s(flows),
    } | extra


def _recovery_s(flows: Sequence[FlowRecord]) -> float:
    """Time flows spent after their last first transmission until everything was delivered: what loss
    recovery (retransmissions, timeouts) added to the collective, summed over the flows that needed any."""
    total = 0
    for f in flows:
        if f.retransmitted and f.complete and f.settle_ns and f.send_done_ns:
            total += max(0, f.settle_ns - f.send_done_ns)
    return total / 1e9


@dataclass
class Metrics:
    records: list[dict]
    steps: list[dict] = field(default_factory=list)
    summary: dict = field(default_factory=dict)


def step_times(collectives: Iterable[CollectiveRecord]) -> list[dict]:
    """Per iteration: from the first collective's start to the last one's end (None if any did not end)."""
    by_iter: dict[int, list[CollectiveRecord]] = defaultdict(list)
    for c in collectives:
        by_iter[c.iteration].append(c)
    out = []
    for it in sorted(by_iter):
        cs = by_iter[it]
        done = all(c.end_ns for c in cs) and all(c.start_ns for c in cs)
        t = (max(c.end_ns for c in cs) - min(c.start_ns for c in cs)) / 1e9 if done else None
        out.append({"iteration": it, "collectives": len(cs), "step_time_s": t})
    return out


def summarize(result: RunResult) -> Metrics:
    by_coll: dict[tuple[str, int], list[FlowRecord]] = defaultdict(list)
    for f in result.flows:
        by_coll[f.collective].append(f)
    records = [collective_record(c, by_coll[(c.name, c.iteration)]) for c in result.collectives]
    steps = step_times(result.collectives)
    done = [s["step_time_s"] for s in steps if s["step_time_s"] is not None]
    fcts = [f.fct_s for f in result.flows if f.fct_s is not None]
    sent = sum(f.sent for f in result.flows)
    delivered = sum(f.delivered for f in result.flows)
    summary = {
        "duration_s": result.duration_s,
        "collectives": len(records),
        "complete": all(r["complete"] for r in records) and not result.timed_out,
        "timed_out": result.timed_out,
        "packet_limit_hit": result.packet_limit_hit,
        "packets_sent": sent,
        "packets_delivered": delivered,
        "packets_lost": sum(f.lost for f in result.flows),
        "loss_fraction": _ratio(sum(f.lost for f in result.flows), sent),
        "tx_dropped": sum(f.tx_dropped for f in result.flows),
        "rx_socket_drops": result.rx_socket_drops,
        "duplicates": sum(f.duplicates for f in result.flows),
        "reordered": sum(f.reordered for f in result.flows),
        "reorder_max": max((f.reorder_max for f in result.flows), default=0),
        "reorder_buffer_max": max((f.reorder_buffer for f in result.flows), default=0),
        "ecn_fraction": _ratio(sum(f.ce for f in result.flows), delivered),
        "step_time_p50_s": percentile(done, 50),
        "step_time_p99_s": percentile(done, 99),
        "step_time_max_s": max(done) if done else None,
        "fct_p50_s": percentile(fcts, 50),
        "fct_p99_s": percentile(fcts, 99),
        "rate_bps": result.config.flow_rate_bps,
        "mtu": result.config.mtu,
        "reaction": result.config.reaction,
        "transport": result.config.transport,
        "plane_policy": result.config.plane_policy,
        "retransmitted": sum(f.retransmitted for f in result.flows),
        "spurious_retransmissions": sum(f.spurious for f in result.flows),
        "timeouts": sum(f.timeouts for f in result.flows),
        "trimmed": sum(f.trimmed for f in result.flows),
        "failed_flows": sum(1 for f in result.flows if f.failed),
        "goodput_bytes": sum(f.delivered_bytes for f in result.flows),
        "wire_bytes": sum(f.sent_bytes for f in result.flows),
    }
    incs = [r["inc"] for r in records if "inc" in r]
    if incs:  # in-network all-reduce: a wrong or missing sum makes the run incomplete
        summary["inc"] = {"verified": all(i["verified"] for i in incs), "chunks": sum(i["chunks"] for i in incs),
                          "retransmissions": sum(i["retransmissions"] for i in incs),
                          "slots_used": max(i["slots_used"] for i in incs),
                          "wrong_sums": sum(i["wrong_sums"] for i in incs)}
    return Metrics(records, steps, summary)


def flow_rows(result: RunResult) -> list[dict]:
    """Per-flow rows (FCT distribution, per-flow loss) for flows.csv."""
    return [{"flow": f.flow, "collective": f.collective[0], "iteration": f.collective[1],
             "transfer": f.transfer, "src": f.src, "dst": f.dst, "plane": f.plane, "bytes": f.bytes,
             "packets": f.npkts, "sent": f.sent, "delivered": f.delivered, "lost": f.lost,
             "duplicates": f.duplicates, "reordered": f.reordered, "reorder_max": f.reorder_max,
             "reorder_buffer": f.reorder_buffer, "ecn_marked": f.ce, "fct_s": f.fct_s, "complete": f.complete,
             "retransmitted": f.retransmitted, "spurious": f.spurious, "timeouts": f.timeouts, "naks": f.naks,
             "trimmed": f.trimmed, "feedback_sent": f.feedback_sent, "failed": f.failed} for f in result.flows]


def write_json(path: str | Path, metrics: Metrics) -> None:
    """metrics.json: {"records": [one per collective and iteration], "steps": [...], "summary": {...}}."""
    Path(path).write_text(json.dumps({"records": metrics.records, "steps": metrics.steps,
                                      "summary": metrics.summary}, indent=2) + "\n")


def write_csv(path: str | Path, rows: Sequence[dict]) -> None:
    """One row per record, columns in the records' key order."""
    with open(path, "w", newline="") as fh:
        if not rows:
            return
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if v is None else v) for k, v in r.items()})


def write_all(out_dir: str | Path, result: RunResult) -> Metrics:
    """Write metrics.json, metrics.csv and flows.csv into `out_dir`; return the metrics."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    m = summarize(result)
    write_json(out / "metrics.json", m)
    write_csv(out / "metrics.csv", [{k: v for k, v in r.items() if k != "inc"} for r in m.records])
    write_csv(out / "flows.csv", flow_rows(result))
    return m
