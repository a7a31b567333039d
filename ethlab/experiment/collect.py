"""Switch-side measurements next to the engine's: per-port transmitted load, ECN marks, queue maxima, drops.

Counters only grow, so a run's numbers are the difference of a snapshot taken before and one after the
traffic; the queue maximum register is reset (MODIFY without index writes every cell) before the traffic
and read after it. Names as in docs/ethplus-header.md.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from p4.v1 import p4runtime_pb2 as pb

from controller.client import SwitchConnection
from controller.codec import decode, encode
from topologies.model import Topology

# The sessions of the switches that can be read right now (RunningFabric.readable): frozen, crashed and
# unmanaged switches are left out, so one of them never costs the numbers of the others.
Sessions = Mapping[str, SwitchConnection]

TX = "MyEgress.telemetry.tx_port_counter"
ECN = "MyEgress.ecn.ecn_marked"
QMAX = "MyEgress.telemetry.qdepth_max"
DROP_REASON = "MyIngress.drop_reason_counter"
DROP_PORT = "MyIngress.drop_port_counter"
DROP_REASONS = {1: "no_route", 2: "hop_expired", 3: "no_live_port", 4: "bad_checksum", 5: "unhandled_ethertype",
                6: "probe_consumed"}


@dataclass
class Snapshot:
    """Counter values of every switch at one moment: {switch: {port: (packets, bytes)}} per counter."""

    at: float
    tx: dict[str, dict[int, tuple[int, int]]] = field(default_factory=dict)
    ecn: dict[str, dict[int, tuple[int, int]]] = field(default_factory=dict)
    drops: dict[str, dict[int, tuple[int, int]]] = field(default_factory=dict)


def reset_register(conn: SwitchConnection, name: str) -> None:
    """Write 0 into every cell of a register (P4Runtime MODIFY without an index)."""
    reg = conn._index().get("registers", name)
    width = reg.type_spec.bitstring.bit.bitwidth  # type: ignore[attr-defined]
    entry = pb.RegisterEntry(register_id=reg.preamble.id)  # type: ignore[attr-defined]
    entry.data.bitstring = encode(0, width)
    conn.modify(entry)


def snapshot(sessions: Sessions, unread: dict[str, str] | None = None) -> Snapshot:
    """Counters of every readable switch; a switch that fails to answer is left out (and named in `unread`)."""
    snap = Snapshot(time.monotonic())
    for sw, conn in sorted(sessions.items()):
        try:
            tx, ecn, drops = conn.read_counter(TX), conn.read_counter(ECN), conn.read_counter(DROP_REASON)
        except Exception as err:  # noqa: BLE001 - a switch that died since: keep the others' numbers
            if unread is not None:
                unread[sw] = f"{type(err).__name__}: {err}"
            continue
        snap.tx[sw], snap.ecn[sw], snap.drops[sw] = tx, ecn, drops
    return snap


def reset_queue_maxima(sessions: Sessions) -> None:
    for _sw, conn in sorted(sessions.items()):
        reset_register(conn, QMAX)


def read_queue_maxima(sessions: Sessions, unread: dict[str, str] | None = None) -> dict[str, dict[int, int]]:
    out: dict[str, dict[int, int]] = {}
    for sw, conn in sorted(sessions.items()):
        try:
            out[sw] = conn.read_register(QMAX)
        except Exception as err:  # noqa: BLE001 - as in snapshot()
            if unread is not None:
                unread[sw] = f"{type(err).__name__}: {err}"
    return out


def _delta(after: dict[int, tuple[int, int]], before: dict[int, tuple[int, int]], port: int) -> tuple[int, int]:
    a = after.get(port, (0, 0))
    b = before.get(port, (0, 0))
    return a[0] - b[0], a[1] - b[1]


def link_stats(topo: Topology, before: Snapshot, after: Snapshot, qmax: dict[str, dict[int, int]],
               duration_s: float, rate_scale: float | None) -> list[dict[str, Any]]:
    """One record per switch egress port that has a link: load sent, utilisation, ECN marks, queue maximum.

    Utilisation is against the rate the port is served at (nominal × rate_scale), or the nominal rate when
    queues are unlimited."""
    rows = []
    for sw in sorted(after.tx):
        for port, link in sorted(topo.ports(sw).items()):
            peer = link.b if link.a.owner == sw and link.a.number == port else link.a
            pkts, nbytes = _delta(after.tx[sw], before.tx.get(sw, {}), port)
            marks, _ = _delta(after.ecn.get(sw, {}), before.ecn.get(sw, {}), port)
            served = link.rate_gbps * 1e9 * (rate_scale or 1.0)
            util = (nbytes * 8 / duration_s) / served if duration_s > 0 and served > 0 else 0.0
            rows.append({"switch": sw, "port": port, "peer": f"{peer.owner}:{peer.number}",
                         "plane": link.plane, "tx_packets": pkts, "tx_bytes": nbytes,
                         "utilisation": round(util, 6), "ecn_marked": marks,
                         "qdepth_max": qmax.get(sw, {}).get(port, 0)})
    return rows


def drop_stats(before: Snapshot, after: Snapshot) -> dict[str, dict[str, int]]:
    """Data-plane drops by reason per switch (only non-zero ones)."""
    out: dict[str, dict[str, int]] = {}
    for sw, cells in after.drops.items():
        for idx, name in DROP_REASONS.items():
            n, _ = _delta(cells, before.drops.get(sw, {}), idx)
            if n:
                out.setdefault(sw, {})[name] = n
    return out


class Sampler:
    """Every `interval_s`: the queue-depth maximum of every port since the last sample (read, then reset) and
    the packets every switch sent towards hosts (delivered load). Gives queue depth and goodput over time at
    the cost of three reads per switch per interval; `readable` says which switches may be touched now."""

    def __init__(self, readable: Callable[[], Sessions], topo: Topology, interval_s: float = 0.25,
                 max_samples: int = 2000) -> None:
        self.readable = readable
        self.interval_s = interval_s
        self.max_samples = max_samples
        self.queue: list[dict[str, Any]] = []
        self.goodput: list[dict[str, Any]] = []
        self.qmax: dict[str, dict[int, int]] = {}
        self.host_ports = {sw.name: [p for p, ln in topo.ports(sw.name).items()
                                     if not topo.nodes[(ln.b if ln.a.owner == sw.name else ln.a).owner].is_switch]
                           for sw in topo.switches}
        self.ports = {sw.name: sorted(topo.ports(sw.name)) for sw in topo.switches}
        self._cells: dict[str, tuple[list[pb.RegisterEntry], list[pb.CounterEntry]]] = {}
        self._width = 19
        self._last: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._t0 = 0.0

    def start(self) -> None:
        self._t0 = time.monotonic()
        self.sample()  # baseline of the delivered counters (and queues cleared)
        self.goodput.clear()
        self.queue.clear()
        self.qmax.clear()
        self._thread = threading.Thread(target=self._loop, name="ethlab-sampler", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        n = 0
        while not self._stop.wait(self.interval_s) and n < self.max_samples:
            n += 1
            self.sample()

    def _entities(self, sw: str, conn: SwitchConnection) -> tuple[list[pb.RegisterEntry], list[pb.CounterEntry]]:
        """One register cell per linked port and one counter cell per host port: a few cells per Read
        instead of whole 512-cell arrays, so sampling stays cheap on many switches."""
        if sw not in self._cells:
            reg = conn._index().get("registers", QMAX)
            ctr = conn._index().get("counters", TX)
            regs, ctrs = [], []
            for port in self.ports[sw]:
                r = pb.RegisterEntry(register_id=reg.preamble.id)  # type: ignore[attr-defined]
                r.index.index = port
                regs.append(r)
            for port in self.host_ports.get(sw, ()):
                c = pb.CounterEntry(counter_id=ctr.preamble.id)  # type: ignore[attr-defined]
                c.index.index = port
                ctrs.append(c)
            self._width = reg.type_spec.bitstring.bit.bitwidth  # type: ignore[attr-defined]
            self._cells[sw] = (regs, ctrs)
        return self._cells[sw]

    def sample(self) -> None:
        t = round(time.monotonic() - self._t0, 3)
        delivered = 0
        read_any = False
        for sw, conn in sorted(self.readable().items()):
            if sw not in self.ports:
                continue
            regs, ctrs = self._entities(sw, conn)
            try:
                cells: dict[int, int] = {}
                total = 0
                for ent in conn.read(*regs, *ctrs):
                    if ent.HasField("register_entry"):
                        cells[ent.register_entry.index.index] = decode(ent.register_entry.data.bitstring)
                    else:
                        total += ent.counter_entry.data.packet_count
                zero = []
                for r in regs:
                    if cells.get(r.index.index):
                        w = pb.RegisterEntry()
                        w.CopyFrom(r)
                        w.data.bitstring = encode(0, self._width)
                        zero.append(pb.Update(type=pb.Update.MODIFY, entity=pb.Entity(register_entry=w)))
                if zero:
                    conn.write(zero)
            except Exception:  # one unreachable switch must not end the sampling of the others
                continue
            read_any = True
            for port, depth in cells.items():
                if depth:
                    self.queue.append({"t_s": t, "switch": sw, "port": port, "qdepth": depth})
                    mx = self.qmax.setdefault(sw, {})
                    mx[port] = max(mx.get(port, 0), depth)
            if ctrs:
                delivered += total - self._last.get(sw, total)
                self._last[sw] = total
        if read_any:  # no switch reachable (controller down): no sample, the next one spans the gap
            self.goodput.append({"t_s": t, "packets": delivered})

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self.sample()  # the tail since the last tick


def merge_maxima(*parts: dict[str, dict[int, int]]) -> dict[str, dict[int, int]]:
    out: dict[str, dict[int, int]] = {}
    for part in parts:
        for sw, cells in part.items():
            mx = out.setdefault(sw, {})
            for port, depth in cells.items():
                mx[port] = max(mx.get(port, 0), depth)
    return out
