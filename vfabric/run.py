"""Drive one virtual-time replay: load the plan, schedule faults, probes and samples, run to completion or
a limit, and hand back the engine-format result (traffic.records.RunResult) plus what happened.

A fault happens at a virtual instant: the data plane sees it at once (carrier loss marks the port dead in
the program's liveness register and flushes its queue), the controller reacts `control_delay_s` later —
its gRPC calls run while virtual time stands still. `time_limit_s` bounds virtual time and `wall_limit_s`
the wall clock; either one hit is reported, and what was measured up to then is kept.
"""

from __future__ import annotations

import gc
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import p4exec
from p4exec.runtime import gcpause
from topologies.faults import Fault, FaultEvent, FaultInjector, events_dicts
from traffic.inc.jobs import setup_jobs
from traffic.records import HostConfig, PlannedCollective, RunResult
from vfabric import partition
from vfabric.control import ControlPlane
from vfabric.events import RunStats, SimError
from vfabric.fabric import VirtualFabric
from vfabric.partition import Pieces, plan_pieces

START_NS = 1_000  # traffic starts 1 µs after the (instantaneous) bring-up
BACKENDS = ("fork", "mpi")  # how independent partitions are spread: forked processes, or MPI ranks
PARTITIONS = ("auto", "coupled")  # virtual.partition's words (or a list of node names per rank)


@dataclass
class VirtualLimits:
    time_limit_s: float = 1.0  # virtual seconds after the traffic starts
    wall_limit_s: float = 900.0
    control_delay_s: float = 100e-6  # fault -> controller reaction (virtual)
    probe_interval_s: float = 20e-6  # adaptive policy's probe rounds (virtual)
    sample_interval_s: float | None = None  # queue/goodput samples over P4Runtime (virtual); None = off
    workers: int = 1  # processes for independent partitions (vfabric/partition.py); 1 = one process
    backend: str = "fork"  # "fork": workers forked here; "mpi": the ranks of `comm` (vfabric/mpi.py)
    comm: Any = None  # the MPI communicator whose ranks share this run (backend "mpi"); None = no MPI job
    # how MPI ranks split the run (vfabric/cut.py): "auto" (independent pieces if there are, else coupled
    # partitions if possible), "coupled" (coupled partitions even when independent pieces exist), or the
    # node names of each rank
    partition: Any = "auto"

    def validate(self) -> None:
        for key in ("time_limit_s", "wall_limit_s", "probe_interval_s"):
            v = getattr(self, key)
            if not isinstance(v, int | float) or isinstance(v, bool) or not math.isfinite(v) or v <= 0:
                raise SimError(f"virtual.{key} must be a positive number of seconds (got {v!r})")
        if not isinstance(self.control_delay_s, int | float) or self.control_delay_s < 0:
            raise SimError(f"virtual.control_delay_s must be >= 0 seconds (got {self.control_delay_s!r})")
        if not isinstance(self.workers, int) or isinstance(self.workers, bool) or self.workers < 1:
            raise SimError(f"virtual.workers must be an integer >= 1 (got {self.workers!r})")
        if self.backend not in BACKENDS:
            raise SimError(f"virtual.backend must be one of {', '.join(BACKENDS)} (got {self.backend!r})")
        p = self.partition
        if p not in PARTITIONS and not (isinstance(p, list) and p and all(
                isinstance(names, list) and all(isinstance(n, str) for n in names) for names in p)):
            raise SimError(f"virtual.partition must be {' or '.join(PARTITIONS)} or a list of node-name lists, "
                           f"one per rank (got {p!r})")
        if self.sample_interval_s is not None and (not isinstance(self.sample_interval_s, int | float)
                                                   or self.sample_interval_s <= 0):
            raise SimError(f"virtual.sample_interval_s must be > 0 seconds (got {self.sample_interval_s!r})")


@dataclass
class Progress:
    """What a progress display needs, handed to the callback every few thousand events."""

    now_ns: int
    limit_ns: int
    events: int
    packets: int
    executions: int
    wall_s: float


@dataclass
class VirtualOutcome:
    result: RunResult
    stats: RunStats
    events: list[dict[str, Any]] = field(default_factory=list)  # faults as ethlab's FaultEvent dicts
    samples: list[tuple[int, Callable[[], None]]] = field(default_factory=list)
    interrupted: bool = False
    partitions: str = "one process"  # how the run was simulated: "N processes" or why it stayed in one

    @property
    def stopped_by(self) -> str:
        if self.interrupted:
            return "interrupted"
        return {"idle": "completed", "done": "completed", "until": "virtual_time_limit",
                "wall": "wall_clock_limit"}.get(self.stats.reason, self.stats.reason)


def ns(seconds: float) -> int:
    return int(round(seconds * 1e9))


@dataclass
class SplitTimes:
    """Instants of a forked split, per process (index 0 the parent, k the worker of group k): name ->
    (wall clock, this thread's CPU clock). What shows whether the groups were balanced: the parent's waits for
    its workers. Marks in order: start, templates, phase1, agreed, loop; a worker's collected and sent; the
    parent's results (all readable) and merged."""

    marks: list[dict[str, tuple[float, float]]] = field(default_factory=list)
    events: list[int] = field(default_factory=list)  # events each process ran (the work of its group)

    def mark(self, name: str) -> None:
        if not self.marks:
            self.marks.append({})
        self.marks[0][name] = (time.perf_counter(), time.thread_time())

    def span(self, k: int, a: str, b: str, cpu: bool = False) -> float:
        m = self.marks[k]
        return m[b][cpu] - m[a][cpu] if a in m and b in m else 0.0


@dataclass
class _Prepared:
    """How a prepared run goes on: its pieces or coupled engine, the MPI communicator, the virtual-time limit,
    the progress hook and the wall-clock instant its timing starts from."""

    pieces: Pieces
    engine: Any
    comm: Any
    limit_ns: int
    report: Callable[[Any], None]
    wall0: float


class SimClock:
    """Virtual time for the fault plan: 'at t do X' is an event `t` after the run's traffic start."""

    def __init__(self, run: VirtualRun) -> None:
        self.run = run

    def begin(self) -> None:
        pass  # the run's start_ns is time 0

    def call_at(self, at_s: float, fn: Callable[..., None], *args: Any) -> None:
        self.run.sim.at(self.run.start_ns + ns(at_s), fn, *args)

    def now_s(self) -> float:
        return round((self.run.sim.now - self.run.start_ns) / 1e9, 9)

    def mark(self) -> float:
        return 0.0

    def control_s(self, mark: float, told: float | None) -> float:
        return told if told is not None else 0.0  # virtual time stands still while the controller works

    def cancel(self) -> None:
        pass  # events past the run's end never run


class VirtualRun:
    """One replay on a fabric whose control plane is up (`ControlPlane.start()` done)."""

    def __init__(self, fabric: VirtualFabric, control: ControlPlane, limits: VirtualLimits | None = None) -> None:
        self.fabric = fabric
        self.control = control
        self.limits = limits or VirtualLimits()
        self.limits.validate()
        self.sim = fabric.sim
        self.injector = FaultInjector(self, SimClock(self), [])
        self.sample_hooks: list[Callable[[float], None]] = []
        self.start_ns = 0
        self.window_stats: Any = None  # coupled partitions: windows run, frames exchanged, sync time
        self.worker_pss: list[int] = []  # proportional set size of each partition worker at its end (bytes)
        self.split = SplitTimes()  # independent partitions (fork backend): where each process's wall time went
        self._finished: Callable[[], bool] = lambda: self.fabric.endpoints.unsettled == 0
        self.still_after_phase1 = True  # a split group: nothing but completion checks ran after its phase 1

    # ---------------------------------------------------------------- faults
    def schedule_faults(self, faults: list[Fault]) -> None:
        """The fault plan (topologies/faults.py) on this run's verbs, each step an event at its virtual instant."""
        self.injector = FaultInjector(self, SimClock(self), list(faults))
        self.injector.start()

    def link_down(self, a: str, b: str) -> float:
        """Carrier loss now (the data plane marks the port dead, flushes its queue); the controller reacts
        `control_delay_s` later."""
        return self._set_link(a, b, False)

    def link_up(self, a: str, b: str) -> float:
        return self._set_link(a, b, True)

    def _set_link(self, a: str, b: str, up: bool) -> float:
        index = self.fabric.set_link(a, b, up)
        self.sim.after(ns(self.limits.control_delay_s), self._react_link, index, up, f"{a}-{b}")
        return self.limits.control_delay_s

    def _link_rate(self, a: str, b: str, rate_of: Callable[[float], float]) -> None:
        fab = self.fabric
        ln = fab.topo.links[fab.topo.link_index(a, b)]
        for end in (ln.a, ln.b):
            sw = fab.switches.get(end.owner)
            if sw is not None:
                sw.tm.configure(end.number, rate_bps=rate_of(ln.rate_gbps * 1e9))

    def slow_link(self, a: str, b: str, rate_factor: float, rate_pps: float | None) -> None:
        """The link's switch queues serve at `rate_pps` 1500-byte packets, or `rate_factor` of the link rate."""
        self._link_rate(a, b, lambda rate: rate_pps * 12000 if rate_pps is not None else rate * rate_factor)

    def restore_link(self, a: str, b: str) -> None:
        self._link_rate(a, b, lambda rate: rate)

    def switch_stop(self, switch: str) -> None:
        self.fabric.switches[switch].stopped = True

    def switch_restart(self, switch: str) -> None:
        self.fabric.switches[switch].stopped = False

    def switch_kill(self, switch: str) -> None:
        """A crash: the switch forwards nothing from now on (nobody restarts it)."""
        self.fabric.switches[switch].stopped = True

    def controller_stop(self) -> None:
        self.control.controller.close()  # type: ignore[union-attr]
        self.control.down = True

    def controller_restart(self) -> None:
        self.control.controller.start(reconcile=True)  # type: ignore[union-attr]
        self.control.down = False
        self.control.barrier()

    def _react_link(self, index: int, up: bool, target: str) -> None:
        if getattr(self.control, "down", False):
            return  # headless: nobody reroutes (the data plane's liveness still skips the dead port)
        try:
            self.control.controller.link_change(index, up, source="vfabric")  # type: ignore[union-attr]
        except Exception as err:  # noqa: BLE001
            self.injector.events.append(FaultEvent("controller_reaction", target, SimClock(self).now_s(), 0.0,
                                                   f"{type(err).__name__}: {err}"))

    @property
    def events(self) -> list[dict[str, Any]]:
        """What the faults did, as the emulated trial records it."""
        return events_dicts(self.injector.events)

    # ---------------------------------------------------------------- adaptive probes
    def schedule_probes(self) -> None:
        if not getattr(self.control.policy, "uses_probes", False):
            return
        from controller.probes import SEQ_OFFSET, probe_plan

        plan = probe_plan(self.fabric.topo)
        if not plan:
            return
        state = {"round": 0}

        def one_round() -> None:
            ctl = self.control.controller
            if self.fabric.endpoints.unsettled == 0 or ctl is None or getattr(self.control, "down", False):
                return
            seq = (state["round"] & 0xFFFF).to_bytes(2, "big")
            sent = 0
            for probe in plan:
                conn = ctl.state.connections.get(probe.switch)
                if conn is None:
                    continue
                conn.packet_out(probe.frame[:SEQ_OFFSET] + seq + probe.frame[SEQ_OFFSET + 2:],
                                egress_port=probe.port)
                sent += 1
            self.control.barrier(expect_packet_outs=sent)
            state["round"] += 1
            self.sim.after(ns(self.limits.probe_interval_s), one_round)

        self.sim.at(self.start_ns, one_round)

    # ---------------------------------------------------------------- samples
    def schedule_samples(self, sample: Callable[[float], None]) -> None:
        interval = self.limits.sample_interval_s
        if not interval:
            return

        def tick() -> None:
            sample((self.sim.now - self.start_ns) / 1e9)
            if self.fabric.endpoints.unsettled:
                self.sim.after(ns(interval), tick)

        self.sim.at(self.start_ns + ns(interval), tick)

    # ---------------------------------------------------------------- run
    def run(self, plan: list[PlannedCollective], config: HostConfig, faults: Sequence[Fault] = (),
            sample: Callable[[float], None] | None = None,
            progress: Callable[[Progress], None] | None = None) -> VirtualOutcome:
        sim = self.sim
        eps = self.fabric.endpoints
        self.start_ns = sim.now + START_NS
        # The collector is paused while the plan becomes flows, transports and templates: millions of objects
        # made in one go that all live for the whole run. Its automatic passes over the fabric already built
        # (UPN 512: 3 GiB) took more than half of the loading time.
        with gcpause.paused():
            ready = self._prepare(plan, faults, sample, progress)
            # Everything made so far (programs, tables, plan, frames templates) lives for the whole run: keep it
            # out of the cyclic collector's scans, as the emulated switch does (full collections otherwise cost
            # more than the packets); partition workers then share it copy-on-write. No collection first: loading
            # makes no garbage cycles (UPN 512: a full collection here found 0 unreachable objects in 1.4 s of
            # a serial stage); one made anyway would only stay until the process ends.
            gc.freeze()
        pieces, engine, comm = ready.pieces, ready.engine, ready.comm
        limit_ns, report, wall0 = ready.limit_ns, ready.report, ready.wall0
        interrupted = False
        note = pieces.reason and f"one process ({pieces.reason})"
        try:
            if pieces.groups and comm is not None:
                stats = self._run_split_mpi(pieces, limit_ns, report, wall0, comm)
                note = f"{stats.processes} MPI ranks (independent partitions)"
            elif pieces.groups:
                stats = self._run_split(pieces, limit_ns, report, wall0)
                note = f"{stats.processes} processes (independent partitions)"
            elif engine is not None:
                stats = self._run_coupled(engine, limit_ns, report, wall0, comm)
                note = engine.cut.describe(self.fabric.topo)
            elif comm is not None and comm.Get_rank() != 0:
                # not split: rank 0 simulates it alone, as one process would; this rank's records are not kept
                stats = RunStats("idle", sim.now, 0, 0.0)
                note = f"rank 0 of {comm.Get_size()} ({pieces.reason})"
            else:
                stats = sim.run(until_ns=limit_ns, wall_limit_s=self.limits.wall_limit_s, progress=report,
                                progress_every=5000)
        except KeyboardInterrupt:
            interrupted = True
            stats = RunStats("interrupted", sim.now, sim.events, time.perf_counter() - wall0)
        settle = [f.rec.settle_ns for f in eps.flows if f.rec.settle_ns]
        if eps.inc is not None:  # in-network collectives end without flows
            settle += [eps.colls[ci].end_ns for ci in eps.inc.collectives if eps.colls[ci].end_ns]
        end_ns = max(settle) if settle and eps.unsettled == 0 else sim.now
        timed_out = eps.unsettled > 0
        result = eps.result(max(0, end_ns - self.start_ns), timed_out, config)
        return VirtualOutcome(result, stats, self.events, interrupted=interrupted, partitions=note)

    def _prepare(self, plan: list[PlannedCollective], faults: Sequence[Fault],
                 sample: Callable[[float], None] | None, progress: Callable[[Progress], None] | None) -> _Prepared:
        """The plan loaded, faults, probes and samples scheduled, the completion check set, and how the run will
        be simulated (independent pieces, coupled partitions, or one process with its frame templates)."""
        sim = self.sim
        eps = self.fabric.endpoints
        eps.load(plan, self.start_ns)
        if eps.inc is not None:  # in-network all-reduce: its aggregation jobs, over P4Runtime, time frozen
            ctl = self.control.controller
            if ctl is None:
                raise SimError("in-network all-reduce needs the fabric controller")
            setup_jobs(ctl, eps.inc.jobs())
        # arrivals at hosts accounted ahead of their instant, in batches, where that changes nothing (no faults:
        # links stay up; see VirtualEndpoints.defer_arrival)
        self.fabric.deliver_early(not faults and eps.early_delivery_allowed())
        self.schedule_faults(list(faults))
        self.schedule_probes()
        if sample is not None:
            self.schedule_samples(sample)
        limit_ns = self.start_ns + ns(self.limits.time_limit_s)
        wall0 = time.perf_counter()

        def done_check() -> None:
            if self._finished():
                sim.stop("done")
            else:
                sim.after(10_000, done_check)

        sim.at(self.start_ns, done_check)
        self._done_check = done_check

        def report(s: Any) -> None:
            if progress is not None:
                progress(Progress(s.now, limit_ns, s.events, eps.packets, self.fabric.executions(),
                                  time.perf_counter() - wall0))

        comm = self.limits.comm if self.limits.backend == "mpi" else None
        workers = comm.Get_size() if comm is not None else self.limits.workers
        sampling = sample is not None and bool(self.limits.sample_interval_s)
        if self.limits.partition == "auto" or comm is None:
            pieces = plan_pieces(self, list(faults), sampling, workers)
        else:
            pieces = Pieces(reason="coupled partitions asked for")
        if pieces.groups and comm is None and not p4exec.GRPC_FORK_HANDLERS_OFF:
            pieces = Pieces(reason="grpc was imported with its fork handlers on (GRPC_ENABLE_FORK_SUPPORT): "
                                   "forking beside the controller's threads could hang")
        engine = None
        if comm is not None and not pieces.groups:
            engine = self._coupled_engine(comm, sampling, pieces.reason)
            if isinstance(engine, str):
                pieces.reason, engine = engine, None
        if engine is not None:
            engine.prepare()  # this rank's frame templates
        elif not pieces.groups:
            eps.build_templates()
        return _Prepared(pieces, engine, comm, limit_ns, report, wall0)

    # ---------------------------------------------------------------- independent partitions
    def _run_split(self, pieces: Pieces, limit_ns: int, report: Callable[[Any], None], wall0: float) -> RunStats:
        """Group k > 0 in a forked worker each, group 0 here; then the ending agreed and the records merged
        (vfabric/partition.py says why this is exact). Forked while the controller's and the in-process
        servers' gRPC threads run: safe because gRPC's fork handlers are off (p4exec/__init__.py) and a worker
        never calls gRPC. Every wait for a worker is bounded and names the worker that failed."""
        workers: list[partition.Worker] = []
        mine = 0
        deadline = time.monotonic() + self.limits.wall_limit_s + partition.RESULT_GRACE_S
        try:
            for k in range(1, len(pieces.groups)):
                up_r, up_w = os.pipe()
                down_r, down_w = os.pipe()
                pid = os.fork()
                if pid == 0:  # the worker: simulate group k, answer, never return into the caller
                    code = 1
                    try:
                        os.close(up_r)
                        os.close(down_w)
                        for w in workers:
                            os.close(w.results)
                            os.close(w.orders)
                        partition.send(up_w, partition.HELLO)
                        group = pieces.groups[k]
                        early: list[bytes] = []

                        def speculate(group: Any = group, early: list[bytes] = early) -> None:
                            with gcpause.paused():
                                early.append(partition.dumps(partition.collect_group(self, group)))
                            self.split.mark("early")

                        stats = self._simulate_group(group, limit_ns, None, wall0, up_w, down_r,
                                                     speculate=speculate)
                        gc.disable()  # the results are made, pickled and sent, then the worker ends (see below)
                        if early and self.still_after_phase1:
                            results = early[0]  # nothing ran since they were made but completion checks
                            self.split.mark("reused")
                        else:
                            results = partition.dumps(partition.collect_group(self, group))
                        self.split.mark("collected")
                        partition.send_pickled(up_w, results)
                        partition.send(up_w, {"stats": (stats.events, stats.cpu_s), "split": self.split.marks[0],
                                              "pss": partition.pss_bytes()})
                        code = 0
                    except BaseException:  # noqa: BLE001 - say why before the parent sees only a closed pipe
                        import traceback
                        traceback.print_exc()
                    finally:
                        os._exit(code)
                os.close(up_w)
                os.close(down_r)
                worker = partition.Worker(k, pid, up_r, down_w)
                workers.append(worker)
                worker.receive(time.monotonic() + partition.START_TIMEOUT_S, "start")
            stats = self._simulate_group(pieces.groups[mine], limit_ns, report, wall0, None, None, workers,
                                         deadline=deadline)
            events, cpu = stats.events, stats.cpu_s
            self.split.events.append(events)
            # The collector is paused while the workers' results are unpickled and merged (and in a worker while
            # they are gathered and pickled): a UPN 512 group's are ~130k flows' records and transport ends,
            # and the automatic passes those allocations set off took half of the 12 s from the loops' end to
            # the merged results.
            with gcpause.paused():
                for worker in workers:
                    worker.wait(deadline, "results")
                self.split.mark("results")
                for worker in workers:
                    data = worker.receive(deadline, "results")
                    data.update(worker.receive(deadline, "results"))  # its stats, timings and memory
                    partition.merge_group(self, data)
                    events += data["stats"][0]
                    cpu += data["stats"][1]
                    self.worker_pss.append(data["pss"])
                    self.split.marks.append(data["split"])
                    self.split.events.append(data["stats"][0])
                self.split.mark("merged")
        finally:
            for worker in workers:
                os.close(worker.results)
                os.close(worker.orders)
                worker.stop()
        partition.settle_collectives(self)
        return RunStats(stats.reason, stats.now_ns, events, time.perf_counter() - wall0, cpu, len(pieces.groups))

    def _run_split_mpi(self, pieces: Pieces, limit_ns: int, report: Callable[[Any], None], wall0: float,
                       comm: Any) -> RunStats:
        """The MPI backend of `_run_split`: rank k simulates group k (ranks beyond the groups none), the
        ranks agree on the ending as the forked workers do, and rank 0 merges the others' results in rank
        order — what the fork backend merges in worker order. Every rank did the same bring-up (the same
        spec, the same tables), so group k is the same objects on every rank."""
        from vfabric.mpi import polite_barrier

        rank, size = comm.Get_rank(), comm.Get_size()
        groups = pieces.groups
        group = groups[rank] if rank < len(groups) else ([], [], [])

        def agree(ended: tuple[str, int]) -> list[tuple[str, int]]:
            polite_barrier(comm)  # the ranks finish phase 1 at different wall times: wait without spinning
            return [e for k, e in enumerate(comm.allgather(ended)) if k < len(groups)]

        if rank < len(groups):
            stats = self._simulate_group(group, limit_ns, report if rank == 0 else None, wall0, None, None,
                                         agree=agree)
        else:  # nothing to simulate: only take part in the agreement
            agree(("done", 0))
            stats = RunStats("done", self.sim.now, 0, 0.0)
        data = partition.collect_group(self, group) if 0 < rank < len(groups) else None
        others, events, cpu = self._gather_on_rank0(comm, data, stats)
        if rank == 0:
            for item in others:
                partition.merge_group(self, item)
            partition.settle_collectives(self)
        return RunStats(stats.reason, stats.now_ns, events, time.perf_counter() - wall0, cpu,
                        min(size, len(groups)))

    # ---------------------------------------------------------------- coupled partitions
    def _coupled_engine(self, comm: Any, sampling: bool, why_not_pieces: str) -> Any:
        """The window engine of this rank (vfabric/window.py), or why the run stays in one process."""
        from vfabric.cut import CutError, plan_cut
        from vfabric.window import WindowEngine

        asked = self.limits.partition
        explicit = asked if isinstance(asked, list) else None
        cut = plan_cut(self, comm.Get_size(), sampling, explicit)
        if cut.reason:
            if asked == "coupled":
                raise CutError(f"virtual.partition: coupled: {cut.reason}")
            return f"{why_not_pieces}; no coupled partitions either: {cut.reason}" if why_not_pieces else cut.reason
        return WindowEngine(self, cut, comm)

    def _run_coupled(self, engine: Any, limit_ns: int, report: Callable[[Any], None], wall0: float,
                     comm: Any) -> RunStats:
        """Every rank simulates its part window by window; rank 0 then merges the others' results."""

        rank = comm.Get_rank()
        stats = engine.simulate(limit_ns, self.limits.wall_limit_s, wall0, report if rank == 0 else None)
        self.window_stats = engine.stats
        data = engine.collect() if rank != 0 else None
        others, events, cpu = self._gather_on_rank0(comm, data, stats)
        if rank == 0:
            engine.merge(others)
        return RunStats(stats.reason, stats.now_ns, events, time.perf_counter() - wall0, cpu, comm.Get_size())

    def _gather_on_rank0(self, comm: Any, data: dict[str, Any] | None, stats: RunStats
                         ) -> tuple[list[dict[str, Any]], int, float]:
        """Every rank's results (`data` with this rank's stats attached; None where a rank has nothing) to
        rank 0, in rank order: there, the others' results, and the events and CPU time of all ranks (each rank
        gets its own counts back); each worker's memory is noted."""
        from vfabric.mpi import polite_barrier

        if data is not None:
            data["stats"] = (stats.events, stats.cpu_s)
        polite_barrier(comm)  # the ranks finish at different wall times: wait without spinning
        gathered = comm.gather(data, root=0)
        events, cpu = stats.events, stats.cpu_s
        if comm.Get_rank() != 0:
            return [], events, cpu
        assert gathered is not None
        others = [item for item in gathered[1:] if item is not None]
        for item in others:
            events += item["stats"][0]
            cpu += item["stats"][1]
            self.worker_pss.append(item["pss"])
        return others, events, cpu

    def _simulate_group(self, group: tuple[list[int], list[str], list[int]], limit_ns: int,
                        report: Callable[[Any], None] | None, wall0: float, up: int | None, down: int | None,
                        workers: Sequence[partition.Worker] = (),
                        agree: Callable[[tuple[str, int]], list[tuple[str, int]]] | None = None,
                        deadline: float = math.inf, speculate: Callable[[], None] | None = None) -> RunStats:
        """Phase 1: run until this group's flows are settled (or a limit). Then the processes agree when one
        process would have stopped: the latest of their completion checks if all of them finished, else the
        virtual-time limit; phase 2 runs on to it."""
        first, cpu0 = self._phase1(group[0], limit_ns, report, wall0)
        target = self._agree(first, up, down, workers, agree, deadline, speculate)
        reason, _stop_at = target
        stats = self._phase2(first, target, limit_ns, report, wall0)
        final = reason if reason != "done" or stats.reason == "done" else stats.reason
        self.split.mark("loop")
        sim = self.sim
        return RunStats(final, sim.now, sim.events, stats.wall_s, time.thread_time() - cpu0)

    def _phase1(self, fids: list[int], limit_ns: int, report: Callable[[Any], None] | None,
                wall0: float) -> tuple[RunStats, float]:
        """Run only this group's flows until all of them are settled here (the others never start here); also
        the thread's CPU clock when the loop began (templates are not the loop's cost)."""
        eps = self.fabric.endpoints
        only = bytearray(len(eps.flows))
        for fid in fids:
            only[fid] = 1
        eps.only = only
        self.split.mark("start")
        with gcpause.paused():  # a frame template per flow, all kept for the run (as `_prepare` builds them)
            eps.build_templates(fids)
        self.split.mark("templates")
        others = len(eps.flows) - len(fids)  # never started here, so never settled here
        graph = eps.graph
        assert graph is not None
        self._finished = lambda: graph.unsettled == others
        cpu0 = time.thread_time()
        wall_left = max(1e-3, self.limits.wall_limit_s - (time.perf_counter() - wall0))
        first = self.sim.run(until_ns=limit_ns, wall_limit_s=wall_left, progress=report, progress_every=5000)
        self.split.mark("phase1")
        return first, cpu0

    def _agree(self, first: RunStats, up: int | None, down: int | None, workers: Sequence[partition.Worker],
               agree: Callable[[tuple[str, int]], list[tuple[str, int]]] | None, deadline: float,
               speculate: Callable[[], None] | None) -> tuple[str, int | None]:
        """When every process stops, from each one's phase-1 ending. MPI ranks all decide the same from
        everyone's ending; a forked worker tells the parent, then is told (and calls `speculate` to make its
        results ahead if the answer is not there yet); the parent hears every worker, then tells them."""
        ended = (first.reason, first.now_ns)
        if agree is not None:
            target = _agreed_end(agree(ended))
        elif up is not None and down is not None:
            partition.send(up, ended)
            if speculate is not None and not partition.readable(down):
                speculate()
            target = partition.receive(down)
        else:
            target = _agreed_end([ended] + [w.receive(deadline, "ending") for w in workers])
            for w in workers:
                w.order(target)
        self.split.mark("agreed")
        return target

    def _phase2(self, first: RunStats, target: tuple[str, int | None], limit_ns: int,
                report: Callable[[Any], None] | None, wall0: float) -> RunStats:
        """Run on to the agreed end when this process finished before it; say in `still_after_phase1` whether
        results made at the end of phase 1 still hold (nothing but completion checks ran since)."""
        sim = self.sim
        reason, stop_at = target
        self.still_after_phase1 = True
        if not (first.reason == "done" and reason in ("done", "until") and (stop_at is None or sim.now < stop_at)):
            return first
        # the last completion check of phase 2 is at most one interval past stop_at; what is due by then runs
        self.still_after_phase1 = _only_checks_due(sim, self._done_check,
                                                   limit_ns if stop_at is None else stop_at + 10_000)
        # the completion check that stopped phase 1 would have scheduled the next one as its last act
        self._finished = (lambda: sim.now >= stop_at) if stop_at is not None else (lambda: False)
        sim.after(10_000, self._done_check)
        wall_left = max(1e-3, self.limits.wall_limit_s - (time.perf_counter() - wall0))
        return sim.run(until_ns=limit_ns, wall_limit_s=wall_left, progress=report, progress_every=5000)


def _only_checks_due(sim: Any, check: Callable[[], None], by_ns: int) -> bool:
    """Whether nothing but completion checks (and cancelled timers) is due by `by_ns`: then running to it
    changes no state but the clock, and checks schedule only checks."""
    return all(fn is check for fn in sim.due_by(by_ns))


def _agreed_end(ends: Sequence[tuple[str, int]]) -> tuple[str, int | None]:
    """When one process would have stopped, from each partition's own ending: the latest completion check
    if all finished, else the limit that stopped one of them."""
    reasons = {reason for reason, _t in ends}
    if reasons <= {"done"}:
        return ("done", max(t for _r, t in ends))
    if reasons & {"wall", "stopped"}:
        return ("wall" if "wall" in reasons else "stopped", None)
    return ("until", None)
