"""`report.md` in a results directory: the one page to open after a run.

It says what ran (spec, target, versions, seed), how the run ended, the policy comparison (the same columns
as the terminal table), the fault events with their recovery, and shows the plots. It is written from the
files of the results directory alone, so `ethlab report DIR` can rewrite it after the fact, also for a run
that failed half-way (then it says so and shows what was collected)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from ethlab.experiment.aggregate import COLUMNS

PLOT_TITLES = {
    "completion_cdf": "Completion time per collective (CDF per policy)",
    "busbw": "Bus bandwidth per policy",
    "link_utilisation": "Per-link utilisation (switch egress ports)",
    "queue": "Queue depth over time",
    "ecn": "ECN-marked fraction",
    "faults_goodput": "Delivered load around the faults",
}


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _read_spec(path: Path) -> dict[str, Any]:
    try:
        spec = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError):
        return {}
    return spec if isinstance(spec, dict) else {}


def _cell(value: Any, digits: int, spread: float | None) -> str:
    if value is None:
        return "-"
    text = f"{value:.{digits}f}"
    if spread is not None and value:
        text += f" ±{50 * spread:.0f}%"
    return text


def comparison_markdown(aggs: list[dict[str, Any]]) -> list[str]:
    heads = ["policy", "reps"] + [head for _k, head, *_ in COLUMNS] + ["complete"]
    lines = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    for a in aggs:
        cells = [a["policy"], str(a["reps"])]
        cells += [_cell(a.get(key), digits, a.get(f"{key}_spread")) for key, _h, _s, digits, _b in COLUMNS]
        cells.append("yes" if a.get("complete") else "**no**")
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("Medians over repetitions; ±: half the relative spread (max−min)/mean across repetitions. "
                 "Better is lower for times, ECN, loss, reorder and queues; higher for bus bandwidth. "
                 "complete: every collective of every repetition delivered all its packets (packets lost "
                 "to a fault make it no; they are not retransmitted).")
    return lines


LINK_LAYER_COLUMNS = [("frames_corrupted", "frames corrupted"), ("llr_replays", "LLR replays"),
                      ("llr_replayed_frames", "replayed frames"), ("llr_discards", "LLR discards"),
                      ("pause_frames", "pause frames"), ("paused_ns", "paused ns"),
                      ("credit_stall_ns", "credit stall ns"), ("buffer_drops", "buffer drops"),
                      ("e2e_retransmitted", "e2e retransmitted")]


def link_layer_markdown(aggs: list[dict[str, Any]]) -> list[str]:
    """A row per variant that ran with the link layer: its settings and the run's link-layer totals."""
    rows = [a for a in aggs if a.get("link_layer")]
    if not rows:
        return []
    heads = ["policy", "FER", "BER", "LLR", "flow control"] + [h for _k, h in LINK_LAYER_COLUMNS]
    lines = ["## Link layer", "", "| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    for a in rows:
        ll = a["link_layer"]
        cells = [a["policy"], f"{ll.get('frame_error_rate', 0):g}", f"{ll.get('bit_error_rate', 0):g}",
                 "on" if ll.get("llr") else "off", str(ll.get("flow_control", "none"))]
        cells += ["-" if ll.get(k) is None else f"{ll[k]:g}" for k, _h in LINK_LAYER_COLUMNS]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Totals over every port of the run (medians over repetitions): frames that failed their FCS, "
              "go-back-N replays and the frames they re-sent, frames LLR gave up on, PFC pause frames and time "
              "paused, time waiting for CBFC credits, buffer drops; e2e retransmitted: packets the end-to-end "
              "transport sent again.", ""]
    return lines


def _fault_lines(root: Path) -> list[str]:
    rows = []
    for sw_json in sorted((root / "runs").glob("*/rep*/switch.json")):
        sw = _read_json(sw_json) or {}
        policy, rep = sw_json.parent.parent.name, sw_json.parent.name
        recovery = {(r["fault"], r["target"]): r for r in sw.get("recovery", [])}
        for ev in sw.get("faults", []):
            rec = recovery.get((ev["action"], ev["target"]), {})
            back = rec.get("recovery_s")
            at = ev.get("at_s")
            rows.append(f"| {policy} | {rep} | {ev['action']} | {ev['target']} | "
                        f"{'-' if at is None else f'{at:.3f}'} | "
                        f"{'-' if back is None else f'{1e3 * back:.0f}'} | {ev.get('error') or ''} |")
    if not rows:
        return []
    return ["## Faults", "",
            "Recovery: time from the fault to the first delivered load back above half its level before it.", "",
            "| policy | repetition | action | target | at s | recovery ms | error |", "|---|---|---|---|---|---|---|",
            *rows, ""]


def render(root: Path) -> str:
    summary = _read_json(root / "summary.json") or {}
    status = _read_json(root / "status.json") or {}
    versions = _read_json(root / "versions.json") or {}
    name = summary.get("name") or root.parent.name
    state = summary.get("state") or status.get("state") or "running"
    lines = [f"# {name} — {root.name}", ""]
    spec = _read_spec(root / "spec.yaml")
    if spec.get("description"):
        lines += [str(spec["description"]), ""]
    topo, traffic = spec.get("topology") or {}, spec.get("traffic") or {}
    if topo:
        params = ", ".join(f"{k}={v}" for k, v in (topo.get("params") or {}).items())
        lines.append(f"- **topology:** {topo.get('name')}" + (f" ({params})" if params else ""))
    if traffic:
        what = traffic.get("pattern") or traffic.get("trace") or "?"
        extra = ", ".join(f"{k} {traffic[k]}" for k in ("algorithm", "size", "iterations") if traffic.get(k))
        lines.append(f"- **traffic:** {what}" + (f" ({extra})" if extra else ""))
    if spec:
        lines.append(f"- **seed:** {spec.get('seed')}; **repetitions:** {spec.get('repetitions')}; "
                     f"**faults:** {len(spec.get('faults') or [])}")
        lines.append(f"- **clock:** {spec.get('clock', 'emulated')}" + (
            " (vfabric: discrete-event, nominal link rates, times are virtual; docs/virtual-time.md)"
            if spec.get("clock") == "virtual" else " (wall-clock emulation)"))
    done, total = status.get("trials_done"), status.get("trials_total")
    lines.append(f"- **state:** {state}" + (f" ({done} of {total} trials)" if total else ""))
    if summary.get("error") or status.get("error"):
        lines.append(f"- **error:** `{summary.get('error') or status.get('error')}` (details in `error.txt`)")
    lines.append(f"- **target:** {versions.get('target', '?')}; ethlab {versions.get('ethlab', '?')}"
                 f" (git {versions.get('git') or '?'}), Python {versions.get('python', '?')}, "
                 f"kernel {versions.get('kernel', '?')}")
    if summary.get("schedule"):
        lines.append(f"- **schedule digest:** `{summary['schedule']}` (same spec and seed → same digest)")
    lines += ["- **files:** `spec.yaml` (resolved), `summary.json`, `comparison.csv`, `trials.csv`, "
              "`runs/<policy>/rep<N>/` (metrics, flows, links, switch logs)", ""]
    aggs = summary.get("policies") or []
    if aggs:
        lines += ["## Policies compared", "", *comparison_markdown(aggs), ""]
        if spec.get("expect"):
            lines += [f"**What to look for:** {' '.join(str(spec['expect']).split())}", ""]
    lines += link_layer_markdown(aggs)
    lines += _fault_lines(root)
    plots = sorted((root / "plots").glob("*.png")) if (root / "plots").is_dir() else []
    if plots:
        lines += ["## Plots", ""]
        order = list(PLOT_TITLES)
        for png in sorted(plots, key=lambda p: order.index(p.stem) if p.stem in order else len(order)):
            lines += [f"### {PLOT_TITLES.get(png.stem, png.stem)}", "", f"![{png.stem}](plots/{png.name})", ""]
    return "\n".join(lines).rstrip() + "\n"


def write_report(root: Path) -> Path:
    path = root / "report.md"
    path.write_text(render(root))
    return path
