"""`ethlab run SPEC.yaml [--target p4exec|bmv2] [--clock emulated|virtual] [--out DIR] [--repetitions N]`: run an experiment spec."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from ethlab.bringup import TARGETS
from ethlab.checks import bounded_int
from ethlab.experiment.aggregate import comparison_table
from ethlab.experiment.ranks import run_on_ranks
from ethlab.experiment.runner import results_dir, run_experiment
from ethlab.experiment.spec import MAX_REPETITIONS, SpecError, check_link_layer_target, load_spec
from ethlab.outdir import claim_out_dir
from vfabric.mpi import in_mpi_job, mpiexec, oversubscribe_flags, world


def run(args: argparse.Namespace) -> int:
    console = Console()
    if not console.is_terminal:
        console = Console(width=170)
    try:
        spec = load_spec(args.spec)
    except SpecError as err:
        Console(stderr=True).print(f"ethlab run: error: {err}", style="red", markup=False, highlight=False,
                                   soft_wrap=True)
        return 2
    if args.target:
        spec.target = args.target
        try:
            check_link_layer_target(spec)
        except SpecError as err:
            Console(stderr=True).print(f"ethlab run: error: {err}", style="red", markup=False, highlight=False,
                                       soft_wrap=True)
            return 2
    if args.repetitions is not None:
        spec.repetitions = args.repetitions
    if args.seed is not None:
        spec.seed = args.seed
    if args.clock:
        spec.clock = args.clock
    comm = None
    if in_mpi_job():  # started by mpiexec/srun: the ranks it was given (--ranks only says how many to start)
        comm = world()
    elif args.ranks is not None and args.ranks > 1:
        if spec.clock != "virtual":
            Console(stderr=True).print("ethlab run: error: --ranks needs the virtual clock (--clock virtual): "
                                       "emulated trials share this machine's namespaces", style="red",
                                       markup=False)
            return 2
        if not args.dry_run:
            return _launch(args)
    rank = comm.Get_rank() if comm is not None else 0
    if rank != 0:
        console = Console(quiet=True)  # rank 0 speaks for all
    if args.dry_run:
        console.print(f"checked: {spec.name}: {spec.topology} on {spec.target}, {len(spec.variants)} policies × "
                      f"{spec.repetitions} repetitions; nothing brought up (--dry-run)", markup=False)
        return 0
    # A new or empty directory of ours: never one another user can write, a symlink, or an earlier run's
    # (an interrupted run's error.txt and trials would be mixed into this report) — ethlab/outdir.py.
    root = claim_out_dir(Path(args.out) if args.out else results_dir(spec, args.results)) if rank == 0 else None
    if comm is not None:
        root = comm.bcast(root, root=0)  # only rank 0 writes it; the others send it their trials' files
        console.print(f"MPI: {comm.Get_size()} ranks")
    assert root is not None
    console.print(f"experiment [bold]{spec.name}[/]: {spec.topology} {spec.topology_params} on {spec.target}, "
                  f"{spec.clock} clock, {len(spec.variants)} policies × {spec.repetitions} repetitions, seed {spec.seed}")
    console.print(f"results: {root}")
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=False) as bar:
        task = bar.add_task("starting", total=len(spec.variants) * spec.repetitions)

        def progress(msg: str, done: int, total: int) -> None:
            bar.update(task, description=msg[:90], completed=done, total=total)

        if comm is not None and comm.Get_size() > 1:
            outcome = run_on_ranks(spec, root, progress, True, comm)
        else:
            outcome = run_experiment(spec, root, progress)
    if rank != 0:
        return 0 if outcome.state in ("worker", "idle", "complete") else 1
    if outcome.aggregates:
        console.print(comparison_table(outcome.aggregates, f"{spec.name}: policies compared ({spec.target})"))
    if spec.expect and outcome.aggregates:
        console.print(Text.assemble(("what to look for: ", "bold"), " ".join(spec.expect.split())))  # no markup
    for rec in _recoveries(outcome.root):
        console.print(rec)
    if outcome.plots:
        console.print(f"plots: {root / 'plots'}/ ({', '.join(p.name for p in outcome.plots)})")
    if (root / "report.md").exists():
        console.print(f"report: {root / 'report.md'} (table, faults and plots on one page)")
    if outcome.state != "complete":
        console.print(f"[red]run {outcome.state}: {outcome.error}[/]; everything collected so far is in {root} "
                      f"(error.txt, status.json)")
        return 1
    console.print(f"results: {root}")
    return 0


def _launch(args: argparse.Namespace) -> int:
    """`--ranks N` outside an MPI job: start this same command on N ranks of this machine with mpiexec."""
    launcher = mpiexec()
    if launcher is None:
        Console(stderr=True).print("ethlab run: error: --ranks needs mpiexec (make setup installs the mpich "
                                   "wheel into .venv/bin); none found", style="red", markup=False)
        return 2
    cmd = [launcher, "-n", str(args.ranks), *oversubscribe_flags(launcher), sys.executable, "-m", "ethlab.cli",
           "run", args.spec, "--results", args.results]
    for flag in ("target", "out", "repetitions", "seed", "clock"):
        value = getattr(args, flag)
        if value is not None:
            cmd += [f"--{flag}", str(value)]
    return subprocess.run(cmd).returncode


def _recoveries(root: Path) -> list[str]:
    import json

    lines = []
    for sj in sorted(root.glob("runs/*/rep0/switch.json")):
        data = json.loads(sj.read_text())
        for r in data.get("recovery", []):
            lost = json.loads((sj.parent / "metrics.json").read_text())["summary"]["packets_lost"]
            rec = "not within the run" if r["recovery_s"] is None else f"{1e3 * r['recovery_s']:.0f} ms"
            lines.append(f"{sj.parent.parent.name}: {r['fault']} {r['target']} at {r['at_s']:.2f}s → control plane "
                         f"{1e3 * r['control_s']:.0f} ms, goodput back above half in {rec} "
                         f"(±{1e3 * r['interval_s']:.0f} ms); packets lost {lost}")
    return lines


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("run", help="run an experiment spec (policies × repetitions) and compare")
    p.add_argument("spec", help="experiments/NAME.yaml")
    p.add_argument("--target", choices=sorted(TARGETS), default=None, help="override the spec's target")
    p.add_argument("--out", default=None, help="results directory (default results/<name>/<timestamp>)")
    p.add_argument("--results", default="results", help="base directory for results (default results/)")
    p.add_argument("--repetitions", type=bounded_int(1, MAX_REPETITIONS), default=None,
                   help=f"override the spec's repetitions (1..{MAX_REPETITIONS}, as in a spec)")
    p.add_argument("--seed", type=bounded_int(0, (1 << 63) - 1), default=None, help="override the spec's seed")
    p.add_argument("--dry-run", action="store_true", help="check the spec, bring nothing up")
    p.add_argument("--clock", choices=["emulated", "virtual"], default=None,
                   help="override the spec's clock (virtual: vfabric's deterministic fabric at nominal rates)")
    p.add_argument("--ranks", type=bounded_int(1, 4096), default=None,
                   help="MPI ranks (virtual clock): a sweep's trials, or one trial's independent partitions under "
                        "virtual.backend: mpi, spread over them; starts mpiexec -n N here, or uses the ranks of "
                        "an enclosing mpiexec/srun")
    p.set_defaults(func=run)
