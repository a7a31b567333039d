"""`ethlab run` on several MPI ranks: a sweep's trials spread over the ranks, or one trial's partitions.

Every rank runs this with the same spec (SPMD). With two trials or more (variants × repetitions), trial i
of the serial order goes to rank i mod N; each rank runs its trials one after the other exactly as a serial
run would (same seeds, same options), rank 0 into the results directory, the others into a scratch
directory whose files they send to rank 0 with their rows. Rank 0 writes them into the same `runs/` tree,
orders the rows as the serial run does and writes trials.csv, summary.json, plots and report.md with the
serial code (`runner.finish`). Virtual-time trials are deterministic, so the records are the serial run's
byte for byte; only `load_1m` (the load average each trial met) differs, as it does between serial reruns.

A single trial is shared instead: under `virtual.backend: mpi` every rank brings the trial up and simulates
its share of the independent partitions (vfabric/run.py `_run_split_mpi`); otherwise rank 0 runs it alone.
Emulated trials use this machine's namespaces and cores: rank 0 runs them serially, the others wait.
"""

from __future__ import annotations

import shutil
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ethlab.experiment.runner import (
    ExperimentOutcome,
    _begin,
    _context,
    _run_one,
    _status,
    finish,
    run_experiment,
    trial_order,
)
from ethlab.experiment.spec import Spec
from vfabric.mpi import Comm, polite_barrier


def run_on_ranks(spec: Spec, root: Path, progress: Callable[[str, int, int], None] | None, plots: bool,
                 comm: Comm) -> ExperimentOutcome:
    rank = comm.Get_rank()
    say = progress if progress is not None and rank == 0 else (lambda _m, _d, _t: None)
    order = trial_order(spec)
    shared_trial = len(order) == 1 and spec.clock == "virtual" and spec.virtual.get("backend") == "mpi"
    if spec.clock != "virtual" or (len(order) == 1 and not shared_trial):
        outcome = run_experiment(spec, root, say, plots) if rank == 0 else ExperimentOutcome(root, state="idle")
        polite_barrier(comm)
        return outcome
    if shared_trial:
        return _shared_trial(spec, root, say, plots, comm)
    return _sweep(spec, root, say, plots, comm, order)


def _sweep(spec: Spec, root: Path, say: Callable[[str, int, int], None], plots: bool, comm: Comm,
           order: list[tuple[int, Any]]) -> ExperimentOutcome:
    rank, size = comm.Get_rank(), comm.Get_size()
    scratch = Path(tempfile.mkdtemp(prefix=f"ethlab-rank{rank}-")) if rank else None
    try:
        if rank == 0:
            out, ctx = _begin(spec, root, say)
            _status(root, out, spec, ctx.total, f"{len(order)} trials on {size} MPI ranks")
        else:
            out, ctx = ExperimentOutcome(root), _context(spec, say)
        base = scratch or root
        rows: dict[int, dict[str, Any]] = {}
        files: dict[str, bytes] = {}
        failure: tuple[int, str, str, str] | None = None  # (trial index, state, error, traceback)
        for i in range(rank, len(order), size):
            rep, variant = order[i]
            current = f"{variant.label} rep {rep}"
            tdir = base / "runs" / variant.label / f"rep{rep}"
            try:
                rows[i] = _run_one(ctx, rep, variant, tdir, i)
            except KeyboardInterrupt:
                failure = (i, "interrupted", f"interrupted during {current}", "")
                break
            except Exception as err:  # recorded, not raised: the partial results stay usable
                failure = (i, "failed", f"{current}: {type(err).__name__}: {err}", traceback.format_exc())
                break
            say(f"{current}: done (rank {rank})", len(rows), len(order))
        if scratch is not None:
            files = {str(p.relative_to(scratch)): p.read_bytes() for p in sorted(scratch.rglob("*")) if p.is_file()}
        polite_barrier(comm)  # ranks end their share at different times: wait without spinning
        gathered = comm.gather((rows, files, failure), root=0)
        if rank != 0:
            return ExperimentOutcome(root, state="worker")
        assert gathered is not None
        failures = []
        for rank_rows, rank_files, rank_failure in gathered:
            rows.update(rank_rows)
            for rel, data in rank_files.items():
                path = root / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
            if rank_failure is not None:
                failures.append(rank_failure)
        out.rows = [rows[i] for i in sorted(rows)]
        ending: str | None = None  # what status.json names as running: nothing, or the failed trial
        out.state = "complete"
        if failures:
            i, state, error, trace = min(failures)  # the one a serial run would have met first
            out.state, out.error = state, error
            ending = f"{order[i][1].label} rep {order[i][0]}"
            if trace:
                (root / "error.txt").write_text(f"failed during {ending}\n\n{trace}")
        return finish(spec, root, out, ctx, ending, plots)
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


def _shared_trial(spec: Spec, root: Path, say: Callable[[str, int, int], None], plots: bool,
                  comm: Comm) -> ExperimentOutcome:
    """One trial, its partitions over the ranks; rank 0 writes everything, the others' files are dropped."""
    from ethlab.experiment import runner

    rank = comm.Get_rank()
    if rank == 0:
        out, ctx = _begin(spec, root, say)
    else:
        out, ctx = ExperimentOutcome(root), _context(spec, say)
    (rep, variant), = trial_order(spec)
    scratch = Path(tempfile.mkdtemp(prefix=f"ethlab-rank{rank}-")) if rank else None
    current: str | None = f"{variant.label} rep {rep}"
    try:
        tdir = (scratch or root) / "runs" / variant.label / f"rep{rep}"
        try:
            out.rows.append(runner._run_one(ctx, rep, variant, tdir, 0, comm))
            out.state, current = "complete", None
        except KeyboardInterrupt:
            out.state, out.error = "interrupted", f"interrupted during {current}"
        except Exception as err:  # recorded, not raised
            out.state, out.error = "failed", f"{current}: {type(err).__name__}: {err}"
            if rank == 0:
                (root / "error.txt").write_text(f"failed during {current}\n\n{traceback.format_exc()}")
        if rank != 0:
            return ExperimentOutcome(root, state="worker")
        return finish(spec, root, out, ctx, current, plots)
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
