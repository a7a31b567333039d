"""Independent-partition parallel DES: a run whose fabric falls apart into pieces that provably share
nothing is simulated by several processes, one group of pieces each, and their records are merged.

Why it is exact. Two events of one piece run in the same order whether the other pieces are simulated in
the same process or not: equal times run in scheduling order, and by induction on the order of execution
every event of a piece is scheduled by an event of the same piece (or by the few shared ones: the plan's
collective starts and the run's completion checks, which every process runs at the same instants). So each
piece goes through exactly the same states as in one process, provided no event of one piece reads or
writes anything another piece touches. `plan_pieces` only splits when that holds:

- the pieces are the connected components of switches and NIC ports over the links, joined further by
  every flow (source and destination NIC port; its feedback uses the same ports), every dependency edge
  between flows and every `after` edge between collectives (one collective's start waits for all flows of
  the other);
- nothing global happens during the run: no faults (the controller would react), no adaptive probes, no
  P4Runtime samples; every flow has one path (no plane spraying: the plane choice reads shared path
  health); the plan's frames fit `max_packets`; no direct counters or meters (their counts live on table
  entries, which are not carried back).

`max_packets` is the only counter the endpoints share (checked before each send). An unreliable run whose
plan fits it never reaches it. A reliable transport adds retransmissions and feedback that are not known
in advance: each process then checks the bound against its own count, and if the merged count exceeds it
the run is reported as having hit the limit (`limit_hit`), as one process would have reported it — the
records then may differ from a single-process run, which would have stopped sending earlier. A reliable
flow's sender and receiver state (its retransmissions, timers and delivered map) goes back with its record.

The one thing that is not per piece is when the run ends: in one process it stops at the first completion
check (every 10 µs of virtual time) after the last flow of all pieces settled, and every piece's events run
up to there. So each process first runs until its own flows are settled, then all agree on the latest such
check and the ones that stopped earlier run on to it (or to the virtual-time limit if a piece did not
finish). What a process simulated — its flows' records and receiver state, its switches' counters and
registers, traffic-manager and drop counts, its links' counters — is sent back to the first process, which
simulated the first group itself, and copied into its own objects; P4Runtime reads, metrics.json,
flows.csv and links.csv then come out byte-identical to the single-process run
(tests/vfabric/test_partitions.py).
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import struct
import time
from dataclasses import dataclass, field
from typing import Any

from vfabric.events import SimError


@dataclass
class Pieces:
    """What can run apart: `groups[k]` is (flow ids, switch names, link indexes) of group k."""

    groups: list[tuple[list[int], list[str], list[int]]] = field(default_factory=list)
    reason: str = ""  # why the run is not split (empty when it is)


class _Union:
    def __init__(self) -> None:
        self.parent: dict[Any, Any] = {}

    def find(self, x: Any) -> Any:
        parent = self.parent
        parent.setdefault(x, x)
        root = x
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:
            parent[x], x = root, parent[x]
        return root

    def join(self, a: Any, b: Any) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra


def plan_pieces(run: Any, faults: list[Any], sampling: bool, workers: int) -> Pieces:
    """Split the loaded run (`VirtualRun` after `endpoints.load`) into at most `workers` groups, or say why
    it must stay in one process."""
    fab = run.fabric
    eps = fab.endpoints
    if workers <= 1:
        return Pieces(reason="one worker asked for")
    if fab.link_ports:
        return Pieces(reason="link layer: its per-port counters are not merged across processes")
    if faults:
        return Pieces(reason="faults: the controller's reaction reaches every switch")
    if getattr(eps, "inc", None) is not None:
        return Pieces(reason="in-network all-reduce: the switches hold state of every member")
    if getattr(run.control.policy, "uses_probes", False):
        return Pieces(reason="adaptive probes: the controller reads all switches while the run goes on")
    if sampling:
        return Pieces(reason="P4Runtime samples read all switches while the run goes on")
    if sum(f.rec.npkts for f in eps.flows) > eps.config.max_packets:
        return Pieces(reason="the plan's frames exceed max_packets (a bound shared by all flows)")
    if any(f.plane is not None for f in eps.flows):
        return Pieces(reason="plane spraying: the NIC's plane choice reads shared path health")
    for sw in fab.switches.values():
        state = getattr(sw.program, "state", None)
        if state is not None and (state.direct_counters or state.direct_meters):
            return Pieces(reason=f"switch {sw.name}: direct counters/meters live on table entries")
    topo = fab.topo
    eid_of = {ep.host: ep.eid for ep in topo.endpoints.values()}
    nodes = _Union()
    # a NIC port's node is a small int (its (eid, plane) numbered once), the rest tuples: the flows' loop below
    # runs once per flow (UPN 512: 261,632) and built two tuples per flow to name their ports
    nic_node: dict[tuple[int, int], int] = {}

    def node(owner: str, plane: int) -> Any:
        if owner in fab.switches:
            return ("sw", owner)
        return nic_node.setdefault((eid_of[owner], plane), len(nic_node))

    for index, ln in enumerate(topo.links):
        nodes.join(("link", index), node(ln.a.owner, ln.plane))
        nodes.join(("link", index), node(ln.b.owner, ln.plane))
    node_of_nic = {id(nic): nic_node.setdefault(key, len(nic_node)) for key, nic in eps.nics.items()}
    flow_root: list[Any] = []
    join = nodes.join
    for f in eps.flows:
        a = node_of_nic[id(f.nic)]
        join(a, node_of_nic[id(f.rx_nic)])
        flow_root.append(a)
    graph = eps.graph
    for fid, deps in enumerate(graph.dependents):
        for d in deps:
            nodes.join(flow_root[fid], flow_root[d])
    for ci, nxt in graph.coll_next.items():
        coupled = [fid for cj in (ci, *nxt) for fid in eps.colls[cj].flows]
        for a, b in zip(coupled, coupled[1:], strict=False):
            nodes.join(flow_root[a], flow_root[b])
    roots: dict[Any, int] = {}  # piece root -> piece number, in order of first flow (deterministic)
    piece_flows: list[list[int]] = []
    for fid in range(len(eps.flows)):
        r = nodes.find(flow_root[fid])
        if r not in roots:
            roots[r] = len(piece_flows)
            piece_flows.append([])
        piece_flows[roots[r]].append(fid)
    if len(piece_flows) < 2:
        return Pieces(reason="the flows couple the whole fabric (one piece)")
    # largest pieces first onto the least-loaded group (frames to simulate as the weight)
    weight = [sum(eps.flows[fid].rec.npkts for fid in fl) for fl in piece_flows]
    ngroups = min(workers, len(piece_flows))
    load = [0] * ngroups
    members: list[list[int]] = [[] for _ in range(ngroups)]
    for p in sorted(range(len(piece_flows)), key=lambda p: (-weight[p], p)):
        g = min(range(ngroups), key=lambda g: (load[g], g))
        members[g].append(p)
        load[g] += weight[p]
    group_of_root = {r: g for g, ps in enumerate(members) for r, p in roots.items() if p in ps}
    out = Pieces()
    for g in range(ngroups):
        fids = sorted(fid for p in members[g] for fid in piece_flows[p])
        sws = sorted(name for name in fab.switches if group_of_root.get(nodes.find(("sw", name))) == g)
        links = [i for i in range(len(topo.links)) if group_of_root.get(nodes.find(("link", i))) == g]
        out.groups.append((fids, sws, links))
    return out


# ------------------------------------------------------------------------------------------ what goes back

def pss_bytes() -> int:
    """Proportional set size of this process (shared pages counted once across the processes)."""
    try:
        with open("/proc/self/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def collect_group(run: Any, group: tuple[list[int], list[str], list[int]]) -> dict[str, Any]:
    """Everything group `group` changed, as plain data."""
    fab = run.fabric
    eps = fab.endpoints
    fids, sws, links = group
    # what `finish_records` reads of an unreliable flow: its record and receiver state (the reaction's rate
    # cuts copied into the record now), as flat values — objects pickle several times slower
    keys: dict[tuple, tuple] = {}
    flows = []
    for fid in fids:
        f = eps.flows[fid]
        if f.cc is not None:
            f.rec.rate_cuts = f.cc.cuts
        rec, rx = vars(f.rec), vars(f.rx)
        rk, xk = tuple(rec), tuple(rx)
        flows.append((fid, keys.setdefault(rk, rk), tuple(rec.values()), keys.setdefault(xk, xk),
                      tuple(rx.values())))
    # a reliable flow's transport ends: only what `finish_records` reads of them, as flat values (pickling the
    # slotted objects whole — PSN bitmaps, send times, RTT estimators — took most of a UPN 512 worker's results)
    transports = [(fid, *transport_end(eps.flows[fid].tx, eps.flows[fid].trx)) for fid in fids] if eps.reliable else []
    switches = {}
    for name in sws:
        sw = fab.switches[name]
        state = sw.program.state if sw.program is not None else None
        # lists: the native pipeline keeps these cells in C arrays (the same objects' cells), which do not pickle
        regs = {k: list(r.values) for k, r in state.registers.items()} if state is not None else {}
        ctrs = ({k: (list(c.packets), list(c.bytes)) for k, c in state.counters.items()}
                if state is not None else {})
        meters = ({k: [(c.tokens, c.last) for c in m.cells] for k, m in state.meters.items()}
                  if state is not None else {})
        queues = {port: (pq.backlog, pq.drops, pq.max_depth) for port, pq in sw.tm.ports.items()}
        switches[name] = (regs, ctrs, meters, queues, dict(sw.drops), sw.received, sw.executions)
    chans = {}
    for index in links:
        link = fab.links[index]
        chans[index] = (link.lost, [(ch.tx_packets, ch.tx_bytes) for ch in _channels(fab, index)])
    return {"flows": flows, "transports": transports, "switches": switches, "links": chans, "packets": eps.packets,
            "foreign": eps.foreign, "rx_foreign": eps.receiver.foreign, "limit_hit": eps.limit_hit,
            "pss": pss_bytes()}


@dataclass(slots=True)
class SenderEnd:
    """A reliable flow's sender once the run is over, as traffic/progress.py `finish_records` reads it: what
    a worker sends back in place of the whole transport."""

    retransmitted: int
    timeouts: int
    naks: int
    failed: bool


@dataclass(slots=True)
class ReceiverEnd:
    """A reliable flow's receiver once the run is over, as `finish_records` reads it (`got`: the last cell of
    the receiver's PSN map, the one thing it reads of it; 0 when the transport keeps none)."""

    delivered: int
    complete: bool
    spurious: int
    discarded: int
    trimmed: int
    got: tuple[int]


def transport_end(tx: Any, trx: Any) -> tuple[Any, ...]:
    """The flat values of `SenderEnd` and `ReceiverEnd` (their fields in order, `got`'s last cell last)."""
    got = getattr(trx, "got", None)
    return (tx.retransmitted, tx.timeouts, tx.naks, tx.failed, trx.delivered, trx.complete, trx.spurious,
            trx.discarded, trx.trimmed, got[-1] if got else 0)


def _channels(fab: Any, index: int) -> list[Any]:
    """The two directions of link `index`, in a fixed order (a-side sender first)."""
    by_link = getattr(fab, "_channels_of_link", None)
    if by_link is None:
        by_link = {}
        for sw in fab.switches.values():
            for ch in sw.ports.values():
                by_link.setdefault(ch.link.index, []).append(ch)
        for nic in fab.endpoints.nics.values():
            by_link.setdefault(nic.channel.link.index, []).append(nic.channel)
        for chs in by_link.values():
            chs.sort(key=lambda ch: repr(ch.port))
        fab._channels_of_link = by_link
    return by_link.get(index, [])


def merge_group(run: Any, data: dict[str, Any]) -> None:
    """Copy a group's results into this process's objects (which did not simulate it)."""
    fab = run.fabric
    eps = fab.endpoints
    for fid, rec_keys, rec_values, rx_keys, rx_values in data["flows"]:
        f = eps.flows[fid]  # never started here: its reaction state stays None, the record has its rate cuts
        vars(f.rec).update(zip(rec_keys, rec_values, strict=True))
        vars(f.rx).update(zip(rx_keys, rx_values, strict=True))
    for fid, retransmitted, timeouts, naks, failed, delivered, complete, spurious, discarded, trimmed, got in \
            data["transports"]:
        f = eps.flows[fid]
        f.tx = SenderEnd(retransmitted, timeouts, naks, failed)
        f.trx = ReceiverEnd(delivered, complete, spurious, discarded, trimmed, (got,))
    for name, (regs, ctrs, meters, queues, drops, received, executions) in data["switches"].items():
        sw = fab.switches[name]
        state = sw.program.state if sw.program is not None else None
        if state is not None:
            for k, values in regs.items():     # in place, with bounds: a C array takes no open slice
                state.registers[k].values[0:len(values)] = values
            for k, (packets, nbytes) in ctrs.items():
                state.counters[k].packets[0:len(packets)] = packets
                state.counters[k].bytes[0:len(nbytes)] = nbytes
            for k, cells in meters.items():
                for cell, (tokens, last) in zip(state.meters[k].cells, cells, strict=True):
                    cell.tokens, cell.last = tokens, last
        for port, (backlog, qdrops, max_depth) in queues.items():
            pq = sw.tm.ports[port]
            pq.backlog, pq.drops, pq.max_depth = backlog, qdrops, max_depth
        sw.drops.update(drops)
        sw.received, sw.executions = received, executions
    for index, (lost, counts) in data["links"].items():
        fab.links[index].lost = lost
        for ch, (packets, nbytes) in zip(_channels(fab, index), counts, strict=True):
            ch.tx_packets, ch.tx_bytes = packets, nbytes
    eps.packets += data["packets"]
    eps.foreign += data["foreign"]
    eps.receiver.foreign += data["rx_foreign"]
    eps.limit_hit = eps.limit_hit or data["limit_hit"] or eps.packets > eps.config.max_packets


def settle_collectives(run: Any) -> None:
    """After merging: what is unsettled, and each collective whose flows all settled ends at the last one
    (what its last settle set in one process)."""
    eps = run.fabric.endpoints
    graph = eps.graph
    graph.unsettled = sum(1 for r in graph.records if not r.settle_ns)
    for c in eps.colls:
        ends = [graph.records[fid].settle_ns for fid in c.flows]
        if c.flows and all(ends):
            c.end_ns = max(ends)


# ------------------------------------------------------------------------------------------ workers and pipes

START_TIMEOUT_S = 60.0  # fork to the worker's first word: nothing runs in between but the fork itself
RESULT_GRACE_S = 120.0  # past the run's wall-clock limit, for the worker's collecting and pickling
HELLO = "started"


class WorkerError(SimError):
    """A partition worker died, or sent nothing in time: which one, and why (never a silent wait)."""


@dataclass
class Worker:
    """A forked partition worker as the parent sees it: group `index`, its results pipe (read end) and its
    orders pipe (write end)."""

    index: int
    pid: int
    results: int
    orders: int
    status: str = ""  # how it ended, once reaped

    def receive(self, deadline: float, waiting_for: str) -> Any:
        """The worker's next message; a `WorkerError` if it ended without sending it or sent nothing by
        `deadline` (time.monotonic)."""
        self.wait(deadline, waiting_for)
        try:
            return receive(self.results)
        except EOFError:
            self.stop()
            raise WorkerError(f"partition worker {self.index} (pid {self.pid}) ended without sending its "
                              f"{waiting_for} ({self.status}; its traceback, if any, is on stderr)") from None

    def order(self, obj: Any) -> None:
        """Send the worker an order. A worker that has already ended (it can end while making its results
        early, before the parent's order) is not an error here: the parent's next `receive` names it."""
        try:
            send(self.orders, obj)
        except BrokenPipeError:
            pass

    def wait(self, deadline: float, waiting_for: str) -> None:
        """Until the worker's next message (or its end) can be read; a `WorkerError` past `deadline`."""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self.stop()
                raise WorkerError(f"partition worker {self.index} (pid {self.pid}) sent no {waiting_for} in time "
                                  f"(stuck; stopped: {self.status})")
            readable, _w, _x = select.select([self.results], [], [], min(left, 1.0))
            if readable:
                return

    def stop(self, grace_s: float = 2.0) -> None:
        """Stop and reap it, bounded. SIGTERM first; SIGKILL after `grace_s`, because a worker can be stuck
        where a SIGTERM handler it inherited never runs (seen once: inside gRPC's after-fork handler, with
        the caller's Python handler for SIGTERM installed, so the signal only set a flag)."""
        if self.status:
            return
        for sig, wait_s in ((None, 0.2), (signal.SIGTERM, grace_s), (signal.SIGKILL, None)):
            if sig is not None:
                try:
                    os.kill(self.pid, sig)
                except ProcessLookupError:
                    pass
            deadline = None if wait_s is None else time.monotonic() + wait_s
            while True:
                done, code = os.waitpid(self.pid, 0 if deadline is None else os.WNOHANG)
                if done:
                    self.status = _describe(code)
                    return
                if deadline is not None and time.monotonic() >= deadline:
                    break
                time.sleep(0.01)


def _describe(code: int) -> str:
    if os.WIFSIGNALED(code):
        return f"killed by {signal.Signals(os.WTERMSIG(code)).name}"
    return f"exit status {os.waitstatus_to_exitcode(code)}"


def dumps(obj: Any) -> bytes:
    return pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)


def send(fd: int, obj: Any) -> None:
    send_pickled(fd, dumps(obj))


def readable(fd: int) -> bool:
    """Whether a message (or the end of the pipe) is waiting on `fd`, without waiting."""
    return bool(select.select([fd], [], [], 0)[0])


def send_pickled(fd: int, data: bytes) -> None:
    """One message already pickled (`dumps`): its length, then its bytes."""
    os.write(fd, struct.pack("<Q", len(data)))
    view = memoryview(data)
    while view:
        n = os.write(fd, view[:1 << 20])
        view = view[n:]


def receive(fd: int) -> Any:
    head = _read(fd, 8)
    (size,) = struct.unpack("<Q", head)
    return pickle.loads(_read(fd, size))


def _read(fd: int, size: int) -> bytes:
    chunks = []
    while size:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            raise EOFError("a partition worker ended without sending its results")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)
