"""`ethlab run`: every policy × repetition of a spec — bring up, replay, collect, tear down — then compare.

Results go to `results/<name>/<UTC timestamp>/` and are written as they come: the resolved spec and
versions first, each trial's files when it ends, `trials.csv`/`summary.json` after every trial, and
`status.json` saying what is done. A failing or interrupted run keeps all that, writes `error.txt` (which
trial, the traceback), still draws what it can, and the command exits non-zero."""

from __future__ import annotations

import csv
import datetime as dt
import json
import os
import platform
import subprocess
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from importlib import metadata
from pathlib import Path
from typing import Any

import yaml

from controller.targets import target_named
from ethlab.experiment import aggregate as agg
from ethlab.experiment.emulated import run_emulated_trial
from ethlab.experiment.markdown import write_report
from ethlab.experiment.plots import draw_all
from ethlab.experiment.spec import Spec, schedule_digest
from ethlab.experiment.trial import TrialSetup
from p4exec.native.select import pipeline_choice
from traffic.records import HostConfig


@dataclass
class ExperimentOutcome:
    root: Path
    rows: list[dict[str, Any]] = field(default_factory=list)
    aggregates: list[dict[str, Any]] = field(default_factory=list)
    plots: list[Path] = field(default_factory=list)
    state: str = "running"  # complete | failed | interrupted
    error: str | None = None


def versions(target: str) -> dict[str, Any]:
    def pkg(name: str) -> str | None:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return None

    out: dict[str, Any] = {"ethlab": pkg("ethlab"), "python": platform.python_version(),
                           "p4runtime": pkg("p4runtime"), "kernel": platform.release(), "target": target}
    try:
        out["git"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                    timeout=5, cwd=Path(__file__).resolve().parents[2]).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        out["git"] = None
    out.update(target_named(target).versions())
    out["max_flow_rate_mbps"] = target_named(target).max_flow_rate_mbps  # flows above it run paced (paced())
    return out


def results_dir(spec: Spec, base: Path | str = "results") -> Path:
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    root = Path(base) / spec.name / stamp
    n = 1
    while root.exists():
        n += 1
        root = Path(base) / spec.name / f"{stamp}-{n}"
    return root


def _write_rows(root: Path, rows: list[dict[str, Any]]) -> None:
    if rows:
        flat = [agg.flat(r) for r in rows]
        with (root / "trials.csv").open("w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=agg.csv_fields(flat))
            w.writeheader()
            w.writerows(flat)


def _status(root: Path, out: ExperimentOutcome, spec: Spec, total: int, current: str | None) -> None:
    (root / "status.json").write_text(json.dumps({
        "state": out.state, "trials_done": len(out.rows), "trials_total": total, "current": current,
        "policies": [v.label for v in spec.variants], "error": out.error}, indent=1))


def paced(spec: Spec, engine: HostConfig, rate_scale: float | None) -> tuple[HostConfig, float | None, float]:
    """The spec's engine and queue rates slowed down together for a target that cannot take the spec's
    per-flow rate (Target.pace_factor: BMv2); the virtual clock has no switch processes to pace."""
    factor = 1.0 if spec.clock == "virtual" else target_named(spec.target).pace_factor(engine.flow_rate_bps or 0.0)
    if factor >= 1.0:
        return engine, rate_scale, 1.0
    port = engine.port_rate_bps * factor if engine.port_rate_bps else engine.port_rate_bps
    flow_rate = engine.flow_rate_bps * factor if engine.flow_rate_bps else engine.flow_rate_bps
    engine = replace(engine, flow_rate_bps=flow_rate, port_rate_bps=port,
                     time_limit_ns=int(round(engine.time_limit_ns / factor)))
    return engine, (rate_scale * factor if rate_scale else rate_scale), factor


def _trial_runner(spec: Spec, comm: Any = None) -> Callable[..., Any]:
    """The emulated trial, or the virtual-time one for `clock: virtual` (same setup, same outputs); `comm`:
    the MPI ranks that share the trial's partitions (`virtual.backend: mpi`)."""
    if spec.clock != "virtual":
        return run_emulated_trial
    from functools import partial

    from ethlab.experiment.virtual_trial import run_virtual_trial

    return partial(run_virtual_trial, options=spec.virtual, comm=comm)


def trial_order(spec: Spec) -> list[tuple[int, Any]]:
    """(repetition, variant) in the order a serial run takes them. Odd repetitions run the policies in
    reverse order, so no policy always goes first (warm caches, a drifting background load) — an order
    effect would otherwise look like a policy effect."""
    return [(rep, variant) for rep in range(spec.repetitions)
            for variant in (spec.variants if rep % 2 == 0 else list(reversed(spec.variants)))]


@dataclass
class _Context:
    """What every trial of one experiment shares."""

    spec: Spec
    topo: Any
    plan: Any
    digest: str
    total: int
    say: Callable[[str, int, int], None]


def _run_one(ctx: _Context, rep: int, variant: Any, tdir: Path, done: int, comm: Any = None) -> dict[str, Any]:
    """One trial into `tdir`; its row of trials.csv."""
    spec, say, total = ctx.spec, ctx.say, ctx.total
    current = f"{variant.label} rep {rep}"
    seed = spec.seed * 1000 + rep
    fab = spec.fabric_options(variant)
    engine, rate_scale, factor = paced(spec, spec.engine_config(variant), fab["rate_scale"])
    if factor < 1.0:
        say(f"{current}: paced for {spec.target}: flows at {(engine.flow_rate_bps or 0.0) / 1e6:g} Mbit/s, "
            f"queues and time limit x{factor:g}", done, total)
    setup = TrialSetup(ctx.topo, variant.make_policy(), ctx.plan, engine, spec.target,
                       rate_scale, fab["queue_depth"], seed, list(spec.faults),
                       spec.sample_interval_s, spec.link_layer_config(variant))
    load_1m = round(os.getloadavg()[0], 2)  # foreign CPU load explains most rerun differences

    def trial_say(msg: str) -> None:
        say(f"{current}: {msg}", done, total)

    with pipeline_choice(fab.get("pipeline")):
        result = _trial_runner(spec, comm)(setup, tdir, progress=trial_say)
    return agg.trial_row(variant.label, rep, seed, ctx.digest, result, load_1m)


def run_experiment(spec: Spec, root: Path, progress: Callable[[str, int, int], None] | None = None,
                   plots: bool = True) -> ExperimentOutcome:
    """Run everything in this process; never raises for a trial failure or Ctrl-C (the outcome says), always
    tears down. On several MPI ranks, `ethlab.experiment.ranks.run_on_ranks` runs the same trials and writes
    the same files."""
    say = progress or (lambda _msg, _done, _total: None)
    out, ctx = _begin(spec, root, say)
    current = None
    try:
        for rep, variant in trial_order(spec):
            current = f"{variant.label} rep {rep}"
            _status(root, out, spec, ctx.total, current)
            tdir = root / "runs" / variant.label / f"rep{rep}"
            out.rows.append(_run_one(ctx, rep, variant, tdir, len(out.rows)))
            _write_rows(root, out.rows)
            say(f"{current}: done", len(out.rows), ctx.total)
        out.state = "complete"
        current = None
    except KeyboardInterrupt:
        out.state, out.error = "interrupted", f"interrupted during {current}"
    except Exception as err:  # recorded, not raised: the partial results stay usable
        out.state, out.error = "failed", f"{current}: {type(err).__name__}: {err}"
        (root / "error.txt").write_text(f"failed during {current}\n\n{traceback.format_exc()}")
    return finish(spec, root, out, ctx, current, plots)


def _begin(spec: Spec, root: Path, say: Callable[[str, int, int], None]) -> tuple[ExperimentOutcome, _Context]:
    """The files written before any trial: resolved spec, versions, the schedule."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "spec.yaml").write_text(yaml.safe_dump(spec.resolved(), sort_keys=False))
    if spec.source and Path(spec.source).exists():
        (root / "spec.original.yaml").write_text(Path(spec.source).read_text())
    (root / "versions.json").write_text(json.dumps(versions(spec.target), indent=1))
    out = ExperimentOutcome(root)
    ctx = _context(spec, say)
    (root / "schedule.json").write_text(json.dumps({"digest": ctx.digest, "collectives": [
        {"name": p.name, "iteration": p.iteration, "kind": p.schedule.kind, "algorithm": p.schedule.algorithm,
         "ranks": list(p.schedule.ranks), "size": p.schedule.size, "transfers": len(p.schedule.transfers)}
        for p in ctx.plan]}, indent=1))
    return out, ctx


def _context(spec: Spec, say: Callable[[str, int, int], None]) -> _Context:
    topo = spec.build_topology()
    plan = spec.plan(topo)
    return _Context(spec, topo, plan, schedule_digest(plan), spec.repetitions * len(spec.variants), say)


def finish(spec: Spec, root: Path, out: ExperimentOutcome, ctx: _Context, current: str | None,
           plots: bool) -> ExperimentOutcome:
    """After the trials: trials.csv, summary.json, comparison.csv, plots, status.json, report.md."""
    _write_rows(root, out.rows)
    if out.state == "interrupted":
        (root / "error.txt").write_text(f"{out.error}\n")
    out.aggregates = agg.aggregate(out.rows, [v.label for v in spec.variants])
    (root / "summary.json").write_text(json.dumps({"name": spec.name, "state": out.state, "error": out.error,
                                                   "schedule": ctx.digest, "trials": out.rows,
                                                   "policies": out.aggregates}, indent=1))
    if out.aggregates:
        flat = [agg.flat(a) for a in out.aggregates]
        with (root / "comparison.csv").open("w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=agg.csv_fields(flat))
            w.writeheader()
            w.writerows(flat)
    if plots and out.rows:
        try:
            out.plots = draw_all(root, out.aggregates)
        except Exception as err:  # a plotting problem must not hide the numbers
            (root / "plots-error.txt").write_text(f"{type(err).__name__}: {err}\n{traceback.format_exc()}")
    _status(root, out, spec, ctx.total, current)
    try:
        write_report(root)
    except Exception as err:  # the report is a view of the files above; they stay whatever happens here
        (root / "report-error.txt").write_text(f"{type(err).__name__}: {err}\n{traceback.format_exc()}")
    return out
