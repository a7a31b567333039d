"""Seeded random-frame differential of one `p4src/` program: the same controller entries on p4exec and
BMv2, the same frames in the same order, then egress port, bytes, drops, counters and registers compared.

Frames go one at a time (batch 1, the default): p4exec's outputs are known at once, BMv2 is waited for
until it sent as many (bounded) plus a short quiet spell, so every frame finds BMv2's queues empty, as
p4exec's in-process pipeline does (queue depths are carried in ETH+ headers: a backlog would show up as
byte differences). Per egress port the packets must be the same bytes in the same order; a frame one
target sends and the other drops shows up as a count difference on that port (a late extra packet from
BMv2 is seen with the next frame, so nothing is missed, only the attribution may be one frame late).
Registers that depend on a target's clock are listed in TARGET_SPECIFIC and not compared.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from p4.v1 import p4runtime_pb2 as pb

from controller.artifacts import build_artifacts
from controller.client import SwitchConnection
from difftest.fabric_entries import FabricView, small_fabric, updates_for
from difftest.frames import Frame, FrameGen
from difftest.targets import Bmv2Target, DiffTarget, EmbeddedTarget

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = ("basic_l3", "ethplus")
# Registers that hold a target's clock (ingress_global_timestamp): BMv2's is wall time, p4exec's a
# virtual clock, so their values differ by design. Everything else must be equal.
# The adaptive state learnt from probes (best_port, best_qdepth) is replaced when its entry is older than
# best_hop_timeout_us: which probe wins depends on the clock too.
TARGET_SPECIFIC = {"MyIngress.lb.flowlet_last_seen", "MyIngress.lb.best_updated", "MyIngress.lb.best_port",
                   "MyIngress.lb.best_qdepth"}
DETAILS = 10


@dataclass
class DiffReport:
    program: str
    seed: int
    sent: Counter[str] = field(default_factory=Counter)
    outputs: dict[str, int] = field(default_factory=dict)
    mismatches: list[str] = field(default_factory=list)  # the first DETAILS, in full
    mismatch_count: int = 0
    state_diffs: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def agree(self) -> bool:
        return not self.mismatch_count and not self.state_diffs

    def summary(self) -> str:
        total = sum(self.sent.values())
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(self.sent.items()))
        outs = ", ".join(f"{t} {n}" for t, n in self.outputs.items())
        head = (f"{self.program}: {total} frames (seed {self.seed}; {kinds}) -> outputs {outs}; "
                f"{self.mismatch_count} differing batch port(s), {len(self.state_diffs)} counter/register "
                f"difference(s); {self.seconds:.1f} s ({total / max(self.seconds, 1e-9):.0f} frames/s)")
        return "\n".join([head, *("  " + m for m in self.mismatches), *("  " + d for d in self.state_diffs[:20])])


def _by_port(outputs: list[tuple[int, bytes]]) -> dict[int, list[bytes]]:
    ports: dict[int, list[bytes]] = defaultdict(list)
    for port, data in outputs:
        ports[port].append(data)
    return ports


def compare_batch(frames: list[Frame], mine: list[tuple[int, bytes]], ref: list[tuple[int, bytes]],
                  report: DiffReport) -> None:
    a, b = _by_port(mine), _by_port(ref)
    for port in sorted(set(a) | set(b)):
        if a.get(port, []) == b.get(port, []):
            continue
        report.mismatch_count += 1
        if len(report.mismatches) >= DETAILS:
            continue
        kinds = Counter(f.kind for f in frames)
        first = next((i for i, (x, y) in enumerate(zip(a.get(port, []), b.get(port, []), strict=False))
                      if x != y), None)
        detail = f"port {port}: p4exec {len(a.get(port, []))} packet(s), BMv2 {len(b.get(port, []))}"
        if first is not None:
            detail += (f"; #{first + 1} differs: p4exec {a[port][first][:48].hex()} BMv2 "
                       f"{b[port][first][:48].hex()}")
        report.mismatches.append(f"{detail} (batch of {dict(kinds)}; inputs "
                                 f"{[(f.port, f.data[:24].hex()) for f in frames][:4]}...)")


def read_state(conn: SwitchConnection) -> dict[str, dict[int, tuple[int, int]]]:
    """Every indirect counter and register cell that is not zero, by object name."""
    index = conn._index()
    state: dict[str, dict[int, tuple[int, int]]] = {}
    p4info = index.p4info
    for c in p4info.counters:
        cells = {}
        for ent in conn.read(pb.Entity(counter_entry=pb.CounterEntry(counter_id=c.preamble.id))):
            data = ent.counter_entry.data
            if data.packet_count or data.byte_count:
                cells[ent.counter_entry.index.index] = (data.packet_count, data.byte_count)
        state[f"counter {c.preamble.name}"] = cells
    for r in p4info.registers:
        cells = {}
        for ent in conn.read(pb.Entity(register_entry=pb.RegisterEntry(register_id=r.preamble.id))):
            raw = ent.register_entry.data.bitstring
            value = int.from_bytes(raw, "big")
            if value:
                cells[ent.register_entry.index.index] = (value, 0)
        state[f"register {r.preamble.name}"] = cells
    return state


def compare_state(mine: dict[str, dict[int, tuple[int, int]]], ref: dict[str, dict[int, tuple[int, int]]],
                  report: DiffReport) -> None:
    for name in sorted(set(mine) | set(ref)):
        if name.split(" ", 1)[1] in TARGET_SPECIFIC:
            continue
        a, b = mine.get(name, {}), ref.get(name, {})
        for i in sorted(set(a) | set(b)):
            if a.get(i) != b.get(i):
                report.state_diffs.append(f"{name}[{i}]: p4exec {a.get(i)} BMv2 {b.get(i)}")


def install(target: DiffTarget, program: str, view: FabricView, policy: str) -> int:
    updates = updates_for(program, target.conn, view, policy)
    target.conn.write(updates)
    return len(updates)


def run_random(program: str, packets: int, seed: int = 1, batch: int = 1, policy: str = "ecmp",
               build_dir: Path = ROOT / "build" / "difftest") -> DiffReport:
    if program not in PROGRAMS:
        raise ValueError(f"unknown program {program!r} (one of {', '.join(PROGRAMS)})")
    source = ROOT / "p4src" / f"{program}.p4"
    view = small_fabric()
    frames = FrameGen(view.topo, view.switch, view.ports, seed).frames(packets)
    report = DiffReport(program if program != "ethplus" else f"ethplus ({policy})", seed,
                        Counter(f.kind for f in frames))
    mine = EmbeddedTarget(build_artifacts(source, "p4exec", build_dir))
    try:
        ref = Bmv2Target(build_artifacts(source, "bmv2", build_dir))
        try:
            install(mine, program, view, policy)
            install(ref, program, view, policy)
            start = time.monotonic()
            totals = Counter[str]()
            for i in range(0, len(frames), batch):
                chunk = frames[i:i + batch]
                for f in chunk:
                    mine.send(f.port, f.data)
                    ref.send(f.port, f.data)
                out_mine = mine.collect(0)
                out_ref = ref.collect(len(out_mine))
                totals[mine.name] += len(out_mine)
                totals[ref.name] += len(out_ref)
                compare_batch(chunk, out_mine, out_ref, report)
            late = ref.collect(0)  # anything BMv2 still sends after the last frame
            if late:
                compare_batch([], [], late, report)
                totals[ref.name] += len(late)
            report.seconds = time.monotonic() - start
            report.outputs = dict(totals)
            compare_state(read_state(mine.conn), read_state(ref.conn), report)
        finally:
            ref.close()
    finally:
        mine.close()
    return report
