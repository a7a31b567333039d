"""Rows and tables from trial results: one row per trial (policy × repetition), one aggregate per policy,
the comparison table, and the difference of two runs. Pure functions over plain dicts, so `ethlab compare`
works from the files alone."""

from __future__ import annotations

import statistics
from typing import Any

from rich.table import Table

from ethlab.experiment.trial import TrialResult

# (column key, heading, scale, digits, better): what the comparison shows, in order.
COLUMNS = [("time_ms", "completion ms", 1, 2, "low"), ("busbw_MBps", "busbw MB/s", 1, 3, "high"),
           ("p99_ms", "p99 step ms", 1, 2, "low"), ("ecn_pct", "ECN %", 1, 2, "low"),
           ("loss_pct", "loss %", 1, 3, "low"), ("reordered", "reorder", 1, 0, "low"),
           ("reorder_max", "reorder dist", 1, 0, "low"), ("reorder_buffer", "reorder buf", 1, 0, "low"),
           ("max_queue", "max queue", 1, 0, "low"), ("recovery_ms", "recovery ms", 1, 1, "low")]


def trial_row(label: str, rep: int, seed: int, digest: str, res: TrialResult,
              load_1m: float | None = None) -> dict[str, Any]:
    recs = res.metrics.records
    s = res.metrics.summary
    times = [r["time_s"] for r in recs if r["time_s"] is not None]
    busbw = [r["busbw_GBps"] for r in recs if r["busbw_GBps"] is not None]
    sw = res.switch["summary"]
    rec_times = [r["recovery_s"] for r in res.switch.get("recovery", []) if r["recovery_s"] is not None]
    return {"policy": label, "rep": rep, "seed": seed, "schedule": digest, "complete": bool(s["complete"]),
            "collectives": len(recs),
            "time_ms": 1e3 * statistics.fmean(times) if times else None,
            "busbw_MBps": 1e3 * statistics.fmean(busbw) if busbw else None,
            "p99_ms": 1e3 * s["step_time_p99_s"] if s.get("step_time_p99_s") is not None else None,
            "ecn_pct": 100 * (s.get("ecn_fraction") or 0.0), "loss_pct": 100 * (s.get("loss_fraction") or 0.0),
            "packets_sent": s["packets_sent"], "packets_delivered": s["packets_delivered"],
            "packets_lost": s["packets_lost"], "reordered": s["reordered"],
            "reorder_max": s.get("reorder_max", 0), "reorder_buffer": s.get("reorder_buffer_max", 0),
            "max_queue": sw["max_queue"],
            "switch_ecn_marked": sw["switch_ecn_marked"], "switch_drops": sw["switch_drops"],
            "link_util_max": sw["link_util_max"], "recovery_ms": 1e3 * max(rec_times) if rec_times else None,
            "rx_socket_drops": s.get("rx_socket_drops", 0), "timed_out": bool(s.get("timed_out")),
            "load_1m": load_1m, **_link_layer(s)}


def _link_layer(summary: dict[str, Any]) -> dict[str, Any]:
    """The run's link-layer totals and end-to-end retransmissions (only when the link layer was on)."""
    ll = summary.get("link_layer")
    if ll is None:
        return {}
    return {"link_layer": {**ll, "e2e_retransmitted": summary.get("retransmitted", 0)}}


def flat(row: dict[str, Any]) -> dict[str, Any]:
    """A row for a CSV file: a nested mapping becomes `key.sub` columns."""
    out: dict[str, Any] = {}
    for k, v in row.items():
        if isinstance(v, dict):
            out.update({f"{k}.{kk}": vv for kk, vv in v.items()})
        else:
            out[k] = v
    return out


def csv_fields(rows: list[dict[str, Any]]) -> list[str]:
    """Every column of the rows, in first-seen order (rows of runs with and without the link layer mix)."""
    return list(dict.fromkeys(k for r in rows for k in r))


def _median(values: list[Any]) -> float | None:
    """Median over repetitions: one repetition slowed by a burst of foreign CPU load does not move it."""
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


def _spread(values: list[Any]) -> float | None:
    """Relative spread (max − min) / mean across repetitions."""
    vals = [v for v in values if v is not None]
    if len(vals) < 2:
        return None
    m = statistics.fmean(vals)
    return (max(vals) - min(vals)) / m if m else 0.0


def aggregate(rows: list[dict[str, Any]], order: list[str] | None = None) -> list[dict[str, Any]]:
    """One entry per policy: medians over repetitions, plus the relative spread of each column."""
    labels = order or sorted({r["policy"] for r in rows})
    out = []
    for label in labels:
        mine = [r for r in rows if r["policy"] == label]
        if not mine:
            continue
        agg: dict[str, Any] = {"policy": label, "reps": len(mine), "complete": all(r["complete"] for r in mine)}
        for key, *_ in COLUMNS:
            agg[key] = _median([r.get(key) for r in mine])
            agg[f"{key}_spread"] = _spread([r.get(key) for r in mine])
        agg["packets_lost"] = sum(r["packets_lost"] for r in mine)
        lls = [r["link_layer"] for r in mine if r.get("link_layer")]
        if lls:
            agg["link_layer"] = {k: (_median([x.get(k) for x in lls]) if isinstance(v, int | float)
                                     and not isinstance(v, bool) and k not in ("frame_error_rate", "bit_error_rate")
                                     else v) for k, v in lls[0].items()}
        out.append(agg)
    return out


def _fmt(v: Any, digits: int) -> str:
    if v is None:
        return "-"
    return f"{v:.{digits}f}"


def comparison_table(aggs: list[dict[str, Any]], title: str) -> Table:
    t = Table(title=title)
    t.add_column("policy")
    t.add_column("reps", justify="right")
    for _key, head, _s, _d, _b in COLUMNS:
        t.add_column(head, justify="right")
    t.add_column("ok")
    for a in aggs:
        cells = []
        for key, _head, _s, digits, _b in COLUMNS:
            cell = _fmt(a[key], digits)
            if a.get(f"{key}_spread") is not None and a[key]:
                cell += f" ±{50 * a[f'{key}_spread']:.0f}%"
            cells.append(cell)
        t.add_row(a["policy"], str(a["reps"]), *cells, "yes" if a["complete"] else "[red]NO")
    t.caption = "medians over repetitions; ±: half the relative spread (max−min)/mean across repetitions"
    return t


def diff(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per policy present in both runs and per column: A, B, relative change."""
    bmap = {x["policy"]: x for x in b}
    out = []
    for x in a:
        y = bmap.get(x["policy"])
        if y is None:
            continue
        for key, head, _s, digits, better in COLUMNS:
            va, vb = x.get(key), y.get(key)
            rel = None if va in (None, 0) or vb is None else (vb - va) / abs(va)
            out.append({"policy": x["policy"], "metric": head, "key": key, "a": va, "b": vb, "rel": rel,
                        "better": better, "digits": digits})
    return out
