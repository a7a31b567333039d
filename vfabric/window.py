"""The conservative windowed engine of coupled partitions (vfabric/cut.py says who simulates what).

Every rank brought up the same fabric (same spec, same tables), so every rank holds every object; each
simulates only its own switches and the NIC ports cabled to them, and starts only the flows whose source NIC
port is its own. Frames put on a cut link go into an outbox instead of onto the local heap, with the
arrival time and the channel place they got on the sending side. Then, window after window:

1. the ranks exchange their outboxes and what each knows (next event time, settled flows, wall limit) in
   one collective, and insert the frames received in (time, place) order — exactly the key their arrival
   event has in one process, so the receiving rank runs them where one process would have;
2. all agree on the next event time t (the minimum over ranks, boundary frames included);
3. each runs its events up to t + lookahead − 1, clipped at the next completion check and the virtual-time
   limit: a frame sent inside the window arrives at t + lookahead at the earliest, after the window (asserted
   for every frame received: `BoundaryError`).

Why it is exact: a rank runs its own events in the order one process runs them (channel places are fixed
by the topology; the scheduler's counter is only compared between events of one rank, scheduled by events
of that rank in the same order); the rest of the fabric reaches it only by frames, each inserted before its
instant with its own key. Faults, link-state changes and controller reactions are events every rank runs at
the same virtual instants on its own copy of the fabric (the controller, over P4Runtime gRPC into the rank's
in-process servers, writes the same entries on every rank; a rank's switches that carry no traffic there
just hold them). The completion check every 10 µs is the one global read: each rank stops at it (after the
events one process would have run before it at that instant), the exchange sums the settled flows, and all
stop together or go on.

At the end rank 0 gathers what the others simulated — flow records (sender and receiver halves), transport
and receiver state, switch registers, counters, queues and drops, link counters — and copies it into its
objects, so metrics.json, flows.csv and links.csv come out byte-identical to one process
(tests/mpi/test_coupled.py). `max_packets` is counted per rank: a run that reaches it in total is reported as
having hit the limit (as independent partitions do), but may have sent more than one process would have.
"""

from __future__ import annotations

import os
import pickle
import time
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from vfabric import partition
from vfabric.cut import Cut, CutError
from vfabric.events import RunStats, SimError

CHECK_NS = 10_000  # the completion checks' period (vfabric/run.py's done_check)
NEVER = 1 << 62
SPIN_S = 200e-6  # how long a rank waiting for the others only yields the CPU between tests
NAP_FIRST_S, NAP_MAX_S = 50e-6, 2e-3  # then it sleeps, doubling its naps up to this


class BoundaryError(SimError):
    """A frame from another rank arrived before its window ended: the lookahead was wrong (never expected)."""


@dataclass
class WindowStats:
    windows: int = 0
    frames_out: int = 0
    sync_s: float = 0.0  # wall time in the exchanges (waiting for the slowest rank included)


def exchange(comm: Any, outgoing: list[Any]) -> list[Any]:
    """One window's collective: item k of `outgoing` to rank k, item k of the result from rank k (pickled).
    Non-blocking (the sizes, then the bytes: MPI_Ialltoall, MPI_Ialltoallv), waited for by `wait`: MPICH's
    blocking collectives busy-poll, and a rank polling on a core it shares takes the CPU from the very rank
    it waits for (measured: UPN 64 on 2 ranks at load 9, a rank spinning alone made the pair hardly faster
    than one process)."""
    from mpi4py import MPI

    size = len(outgoing)
    blobs = [pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL) for item in outgoing]
    send_counts = array("i", [len(b) for b in blobs])
    recv_counts = array("i", bytes(4 * size))
    wait(comm.Ialltoall([send_counts, MPI.INT], [recv_counts, MPI.INT]))
    send_displs = array("i", accumulate(send_counts, initial=0))[:size]
    recv_displs = array("i", accumulate(recv_counts, initial=0))[:size]
    recv = bytearray(sum(recv_counts))
    wait(comm.Ialltoallv([b"".join(blobs), (send_counts, send_displs), MPI.BYTE],
                         [recv, (recv_counts, recv_displs), MPI.BYTE]))
    view = memoryview(recv)
    return [pickle.loads(view[d:d + n]) for d, n in zip(recv_displs, recv_counts, strict=True)]


def wait(req: Any) -> None:
    """Until the request completes: yielding the CPU between tests for `SPIN_S` (a short window's partners
    are nearly there), then sleeping ever longer naps up to `NAP_MAX_S` (a rank sharing this core gets it)."""
    if req.Test():
        return
    t0 = time.perf_counter()
    nap = NAP_FIRST_S
    while not req.Test():
        if time.perf_counter() - t0 < SPIN_S:
            os.sched_yield()
        else:
            time.sleep(nap)
            nap = min(2 * nap, NAP_MAX_S)


class Frames:
    """One rank's outboxes: frames put on cut channels during the window, by destination rank."""

    def __init__(self, ranks: int) -> None:
        self.boxes: list[list[tuple[int, int, int, Any]]] = [[] for _ in range(ranks)]
        self.sent = 0

    def hook(self, dest: int, cid: int) -> Callable[[Any, Any, int, int], bool]:
        """A `Channel.early` that takes the frame for rank `dest` (channel `cid`)."""
        box = self.boxes[dest]

        def take(_port: Any, frame: Any, arrive: int, place: int) -> bool:
            box.append((arrive, place, cid, frame))
            return True

        return take

    def take_all(self) -> list[list[tuple[int, int, int, Any]]]:
        out = [list(b) for b in self.boxes]
        for b in self.boxes:
            self.sent += len(b)
            b.clear()
        return out


class WindowEngine:
    """Runs one loaded `VirtualRun` as rank `comm.Get_rank()` of a coupled partition."""

    def __init__(self, run: Any, cut: Cut, comm: Any, exchange: Callable[[list[Any]], list[Any]] | None = None):
        self.run = run
        self.cut = cut
        self.comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self.exchange = exchange or self._alltoall
        self.stats = WindowStats()
        fab = run.fabric
        eps = fab.endpoints
        topo = fab.topo
        self.sim = fab.sim
        nic_key = {id(nic): key for key, nic in eps.nics.items()}
        rank = self.rank
        self.src_local = [cut.nic_rank.get(nic_key[id(f.nic)], 0) == rank for f in eps.flows]
        self.dst_local = [cut.nic_rank.get(nic_key[id(f.rx_nic)], 0) == rank for f in eps.flows]
        self.switches = sorted(n for n, r in cut.switch_rank.items() if r == rank)
        # the boundary: outboxes on the sending side, the receiving channels by id on the other
        self.frames = Frames(self.size)
        self.incoming: dict[int, Any] = {}
        for index in cut.cut_links:
            ln = topo.links[index]
            for reverse, (near, far) in enumerate(((ln.a, ln.b), (ln.b, ln.a))):
                ch = fab.switches[near.owner].ports[near.number]
                cid = 2 * index + reverse
                src_rank, dst_rank = cut.switch_rank[near.owner], cut.switch_rank[far.owner]
                if src_rank == rank:
                    ch.early = self.frames.hook(dst_rank, cid)
                elif dst_rank == rank:
                    self.incoming[cid] = ch
        # who sends on each channel (its tx counters are that rank's)
        self.sender_rank: dict[int, int] = {}
        for name, sw in fab.switches.items():
            for ch in sw.ports.values():
                self.sender_rank[id(ch)] = cut.switch_rank[name]
        for key, nic in eps.nics.items():
            self.sender_rank[id(nic.channel)] = cut.nic_rank.get(key, 0)
        self.lost0 = [link.lost for link in fab.links]
        self.last_end = -1  # the end of the window just run (a frame must arrive after it)

    # ---------------------------------------------------------------- set-up
    def prepare(self) -> None:
        """This rank's flows (sources it owns start here) and the frame templates its NIC ports send."""
        eps = self.run.fabric.endpoints
        eps.only = bytearray(self.src_local)
        eps.build_templates([fid for fid in range(len(eps.flows)) if self.src_local[fid] or self.dst_local[fid]])
        graph = eps.graph
        has_deps = [n > 0 for n in graph.deps_left]
        start = graph.at_flow
        src_local = self.src_local

        def at_flow(when: int, fid: int) -> None:
            # a flow that waited for another starts where that one settled: the partitioner keeps them on one
            # rank unless the settling was a failure at the other's source (no lookahead to carry it over)
            if has_deps[fid] and not src_local[fid]:
                f = eps.flows[fid]
                raise CutError(f"flow {fid} ({f.src_ep}->{f.dst_ep}) depends on a flow that settled on rank "
                               f"{self.rank}, but starts on another rank with no delay between: a coupled "
                               "partition cannot reproduce this exactly (run it in one process)")
            start(when, fid)

        graph.at_flow = at_flow
        self.total = graph.unsettled
        # each rank's records start from the same values: what changed is what this rank simulated
        self.rec0 = [dict(vars(f.rec)) for f in eps.flows]
        self.coll0 = [dict(vars(c)) for c in eps.colls]

    # ---------------------------------------------------------------- the loop
    def _alltoall(self, outgoing: list[Any]) -> list[Any]:
        return exchange(self.comm, outgoing)

    def simulate(self, limit_ns: int, wall_limit_s: float, wall0: float,
                 report: Callable[[Any], None] | None = None) -> RunStats:
        run, sim = self.run, self.sim
        eps = run.fabric.endpoints
        graph = eps.graph
        lookahead = self.cut.lookahead_ns
        cpu0 = time.thread_time()
        stop_at_check = [False]

        def at_check() -> bool:  # the completion check (run.run's done_check) pauses this rank's loop
            stop_at_check[0] = True
            sim.stop("check")
            return False

        run._finished = at_check
        next_check = run.start_ns
        checked = False
        reason = "idle"
        error: tuple[str, Exception] | None = None  # what failed here, told to the others before raising
        # (a rank that raised without a word would leave the others waiting in the next exchange for ever)
        last_report = time.perf_counter()
        while True:
            boxes = self.frames.take_all()
            t_next = sim.next_time()
            mine = NEVER if t_next is None else t_next
            for box in boxes:
                for arrive, _place, _cid, _frame in box:
                    if arrive < mine:
                        mine = arrive
            wall_out = time.perf_counter() - wall0 >= wall_limit_s
            news = (mine, self.total - graph.unsettled, wall_out, error and error[0])
            t0 = time.perf_counter()
            got = self.exchange([(boxes[k], news) for k in range(self.size)])
            self.stats.sync_s += time.perf_counter() - t0
            if error is not None:
                raise error[1]
            failed = [n[3] for _b, n in got if n[3]]
            if failed:
                raise CutError(f"coupled run stopped: {failed[0]}")
            try:
                self.insert([item for box, _n in got for item in box])
            except Exception as err:  # noqa: BLE001 - told to the others first, then raised here
                error = (f"rank {self.rank}: {type(err).__name__}: {err}", err)
                continue
            settled = sum(n[1] for _b, n in got)
            if checked and settled == self.total:
                reason = "done"
                break
            if any(n[2] for _b, n in got):
                reason = "wall"
                break
            t = min(n[0] for _b, n in got)
            if t >= NEVER:
                reason = "idle"
                break
            if t > limit_ns:
                sim.now = max(sim.now, limit_ns)
                reason = "until"
                break
            end = min(t + lookahead - 1, next_check, limit_ns)
            stop_at_check[0] = False
            try:
                sim.run(until_ns=end, horizon_ns=limit_ns)  # models commit work ahead as in one run
            except Exception as err:  # noqa: BLE001 - the others would wait for this rank for ever
                error = (f"rank {self.rank}: {type(err).__name__}: {err}", err)
                continue
            self.last_end = sim.now if stop_at_check[0] else end
            checked = stop_at_check[0]
            if checked:
                next_check = sim.now + CHECK_NS
            self.stats.windows += 1
            if report is not None and time.perf_counter() - last_report >= 1.0:
                last_report = time.perf_counter()
                report(sim)
        self.stats.frames_out = self.frames.sent
        return RunStats(reason, sim.now, sim.events, time.perf_counter() - wall0, time.thread_time() - cpu0,
                        self.size)

    def insert(self, frames: list[tuple[int, int, int, Any]]) -> None:
        """Boundary frames into this rank's event order, in the order of their keys (the order they arrive in
        from the exchange does not matter: tests/vfabric/test_window.py shuffles it)."""
        frames.sort(key=lambda x: (x[0], x[1]))
        push = self.sim.push
        for arrive, place, cid, frame in frames:
            if arrive <= self.last_end:
                raise BoundaryError(f"a frame on cut channel {cid} arrives at {arrive} ns, inside the window that "
                                    f"ended at {self.last_end} ns (lookahead {self.cut.lookahead_ns} ns too long)")
            ch = self.incoming[cid]
            early = ch.early
            if early is not None and early(ch.port, frame, arrive, place):
                continue
            push((arrive, place, ch.deliver, (ch.port, frame)))

    # ---------------------------------------------------------------- results
    def collect(self) -> dict[str, Any]:
        """What this rank simulated, as plain data for rank 0."""
        eps = self.run.fabric.endpoints
        flows = []
        for fid, f in enumerate(eps.flows):
            src, dst = self.src_local[fid], self.dst_local[fid]
            if not (src or dst):
                continue
            if src and f.cc is not None:
                f.rec.rate_cuts = f.cc.cuts
            base = self.rec0[fid]
            changed = {k: v for k, v in vars(f.rec).items() if base.get(k) != v}
            flows.append((fid, changed, dict(vars(f.rx)) if dst else None,
                          f.tx if src and eps.reliable else None, f.trx if dst and eps.reliable else None))
        colls = []
        for ci, c in enumerate(eps.colls):
            base = self.coll0[ci]
            changed = {k: v for k, v in vars(c).items() if k != "flows" and base.get(k) != v}
            if changed:
                colls.append((ci, changed))
        data = partition.collect_group(self.run, ([], self.switches, []))
        fab = self.run.fabric
        links = {}
        for index, link in enumerate(fab.links):
            mine = [(ch.tx_packets, ch.tx_bytes) if self.sender_rank.get(id(ch)) == self.rank else None
                    for ch in partition._channels(fab, index)]
            links[index] = (link.lost - self.lost0[index], mine)
        data.update(flows=flows, colls=colls, links=links, stats=(self.sim.events, 0.0))
        return data

    def merge(self, items: list[dict[str, Any]]) -> None:
        """On rank 0: the other ranks' results into this rank's objects."""
        fab = self.run.fabric
        eps = fab.endpoints
        for data in items:
            for fid, changed, rx, tx, trx in data["flows"]:
                f = eps.flows[fid]
                rec = vars(f.rec)
                for k, v in changed.items():
                    if k == "settle_ns" and rec[k] and v:
                        rec[k] = min(rec[k], v)  # a flow that failed at its source and completed at its end
                    else:
                        rec[k] = v
                if rx is not None:
                    vars(f.rx).update(rx)
                if tx is not None:
                    f.tx = tx
                if trx is not None:
                    f.trx = trx
            for ci, changed in data["colls"]:
                vars(eps.colls[ci]).update(changed)
            links = data.pop("links")
            partition.merge_group(self.run, dict(data, flows=[], transports=[], links={}))
            for index, (lost, counts) in links.items():
                fab.links[index].lost += lost
                for ch, got in zip(partition._channels(fab, index), counts, strict=True):
                    if got is not None:
                        ch.tx_packets, ch.tx_bytes = got
        partition.settle_collectives(self.run)
