"""PNG plots of an experiment's results (matplotlib, no display): completion-time CDF per policy, bus
bandwidth bars, per-link utilisation heatmap, queue depth over time, ECN-marked fraction, and goodput around
faults. Each reads only the files of the results directory, so plots can be redrawn after a run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

DPI = 80


def load_trials(root: Path) -> dict[str, list[dict[str, Any]]]:
    """{policy label: [{"metrics": ..., "switch": ...} per repetition that finished]}"""
    out: dict[str, list[dict[str, Any]]] = {}
    status = json.loads((root / "status.json").read_text()) if (root / "status.json").exists() else {}
    order = status.get("policies") or sorted(p.name for p in (root / "runs").iterdir() if p.is_dir())
    for label in order:
        pdir = root / "runs" / label
        if not pdir.is_dir():
            continue
        for rep in sorted(pdir.iterdir()):
            m, s = rep / "metrics.json", rep / "switch.json"
            if m.exists() and s.exists():
                out.setdefault(label, []).append({"metrics": json.loads(m.read_text()),
                                                  "switch": json.loads(s.read_text())})
    return out


def _save(fig: Any, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def completion_cdf(trials: dict[str, list[dict]], path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for label, reps in trials.items():
        times = sorted(1e3 * r["time_s"] for t in reps for r in t["metrics"]["records"] if r["time_s"] is not None)
        if times:
            ys = [(i + 1) / len(times) for i in range(len(times))]
            ax.step([times[0], *times], [0.0, *ys], where="post", label=f"{label} ({len(times)})")
    ax.set_xlabel("collective completion time (ms)")
    ax.set_ylabel("CDF")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("completion time per policy")
    return _save(fig, path)


def _bars(aggs: list[dict], key: str, ylabel: str, title: str, path: Path, scale: float = 1.0) -> Path:
    fig, ax = plt.subplots(figsize=(6, 3.4))
    labels = [a["policy"] for a in aggs]
    vals = [(a[key] or 0.0) * scale for a in aggs]
    errs = [0.5 * (a.get(f"{key}_spread") or 0.0) * v for a, v in zip(aggs, vals, strict=True)]
    ax.bar(labels, vals, yerr=errs, capsize=4, color="tab:blue")
    for i, v in enumerate(vals):
        ax.annotate(f"{v:.3g}", (i, v), ha="center", va="bottom", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    plt.setp(ax.get_xticklabels(), rotation=20, ha="right")
    return _save(fig, path)


def busbw_bars(aggs: list[dict], path: Path) -> Path:
    return _bars(aggs, "busbw_MBps", "bus bandwidth (MB/s, mean)", "busbw per policy (error: half spread)", path)


def ecn_bars(aggs: list[dict], path: Path) -> Path:
    return _bars(aggs, "ecn_pct", "ECN-marked packets (%)", "ECN-marked fraction per policy", path)


def utilisation_heatmap(trials: dict[str, list[dict]], path: Path, max_links: int = 48) -> Path:
    """Rows: switch egress ports that carried traffic under any policy (busiest first); columns: policies."""
    util: dict[str, dict[str, float]] = {}
    for label, reps in trials.items():
        for t in reps:
            for ln in t["switch"]["links"]:
                key = f"{ln['switch']}:{ln['port']}→{ln['peer'].split(':')[0]}"
                cell = util.setdefault(key, {})
                cell[label] = cell.get(label, 0.0) + ln["utilisation"] / len(reps)
    keys = sorted((k for k, v in util.items() if any(v.values())), key=lambda k: -max(util[k].values()))[:max_links]
    keys.sort()
    labels = list(trials)
    fig, ax = plt.subplots(figsize=(1.6 + 1.1 * len(labels), 1.2 + 0.22 * max(1, len(keys))))
    data = [[100 * util[k].get(label, 0.0) for label in labels] for k in keys] or [[0.0] * len(labels)]
    # Scale from 0: a colour scale spanning only the observed range turns a 1 % difference into black vs yellow.
    peak = max((max(row) for row in data), default=0.0)
    im = ax.imshow(data, aspect="auto", cmap="viridis", vmin=0.0, vmax=max(peak, 1e-9))
    for row, values in enumerate(data):
        for col, value in enumerate(values):
            ax.text(col, row, f"{value:.1f}", ha="center", va="center", fontsize=6,
                    color="white" if value < 0.6 * peak else "black")
    ax.set_xticks(range(len(labels)), labels, rotation=20, ha="right")
    ax.set_yticks(range(len(keys)), keys, fontsize=7)
    fig.colorbar(im, ax=ax, label="utilisation (%)")
    ax.set_title("per-link utilisation (egress ports)")
    return _save(fig, path)


def queue_over_time(trials: dict[str, list[dict]], path: Path) -> Path:
    """Deepest queue of the fabric per sampling interval (first repetition of each policy)."""
    fig, ax = plt.subplots(figsize=(6, 3.4))
    for label, reps in trials.items():
        samples = reps[0]["switch"].get("queue_samples") or []
        by_t: dict[float, int] = {}
        for s in samples:
            by_t[s["t_s"]] = max(by_t.get(s["t_s"], 0), s["qdepth"])
        for g in reps[0]["switch"].get("goodput_samples") or []:
            by_t.setdefault(g["t_s"], 0)
        if by_t:
            ts = sorted(by_t)
            ax.plot(ts, [by_t[t] for t in ts], marker=".", label=label)
    ax.set_xlabel("time since traffic start (s)")
    ax.set_ylabel("max queue depth (packets)")
    ax.set_title("deepest egress queue per sampling interval")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, path)


def goodput_faults(trials: dict[str, list[dict]], path: Path) -> Path | None:
    """Packets delivered to hosts per sampling interval, with the faults marked (first repetition)."""
    if not any(reps[0]["switch"].get("faults") for reps in trials.values()):
        return None
    fig, ax = plt.subplots(figsize=(6, 3.4))
    for label, reps in trials.items():
        g = reps[0]["switch"].get("goodput_samples") or []
        line = ax.plot([x["t_s"] for x in g], [x["packets"] for x in g], marker=".", label=label)
        for ev in reps[0]["switch"].get("faults") or []:
            ax.axvline(ev["at_s"], color=line[0].get_color(), ls="--", alpha=0.6)
    ax.set_xlabel("time since traffic start (s)  (dashed: faults)")
    ax.set_ylabel("packets to hosts per interval")
    ax.set_title("delivered load around faults")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, path)


def draw_all(root: Path, aggs: list[dict]) -> list[Path]:
    trials = load_trials(root)
    if not trials:
        return []
    pdir = root / "plots"
    pdir.mkdir(exist_ok=True)
    made = [completion_cdf(trials, pdir / "completion_cdf.png"), busbw_bars(aggs, pdir / "busbw.png"),
            utilisation_heatmap(trials, pdir / "link_utilisation.png"), queue_over_time(trials, pdir / "queue.png"),
            ecn_bars(aggs, pdir / "ecn.png")]
    extra = goodput_faults(trials, pdir / "faults_goodput.png")
    return made + ([extra] if extra else [])
