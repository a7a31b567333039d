"""Helpers for the data-plane tests: ethplus.p4 loaded in p4exec's in-process harness.

Why a wrapper: every statistical test needs the same control-plane set-up (mode,
groups, routes, ECN thresholds, liveness); writing it through the runtime
objects once, with the exact names of docs/ethplus-header.md, keeps the tests
about behaviour. Nothing here fakes the data plane: packets run through the
compiled program.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from p4exec.runtime import ActionCall, Exact, Lpm, TableEntry
from traffic.layers import CPU_PORT, PKT_PROBE, UDP_PORT_ROCE, CpuPacketOut, EthPlus, EthPlusProbe, RoCEv2BTH

if TYPE_CHECKING:
    from p4exec.compiler.program import CompiledProgram
    from p4exec.harness import Harness

ROOT = Path(__file__).resolve().parents[2]
ETHPLUS_P4 = ROOT / "p4src" / "ethplus.p4"
BASIC_L3_P4 = ROOT / "p4src" / "basic_l3.p4"

LB = "MyIngress.lb."
PAYLOAD = Raw(b"\x5a" * 64)


@functools.cache
def _ethplus_source_ok() -> bool:
    """Compile once up front so a compiler error shows as itself, not as N fixture errors."""
    from p4exec.harness import Harness

    Harness.from_file(str(ETHPLUS_P4), seed=1)
    return True


@dataclass
class EthPlusSwitch:
    """One ethplus.p4 switch in the harness, with ethlab's control-plane vocabulary."""

    h: Harness  # p4exec.harness.Harness

    # -------------------------------------------------------------- control plane
    def set_mode(self, mode: int, gap_us: int = 100, timeout_us: int = 1_000_000, mgrp: int = 0) -> None:
        self.h.state.tables[LB + "lb_config"].set_default(
            ActionCall(LB + "set_lb_config", (mode, gap_us, timeout_us, mgrp)))

    def add_group(self, gid: int, ports: list[int]) -> None:
        """Candidates in nhop_group and the same ports as an ECMP selector group."""
        padded = ports + [0] * (8 - len(ports))
        self.h.state.tables[LB + "nhop_group"].insert(
            TableEntry(match=(Exact(gid),), action=ActionCall(LB + "set_candidates", (len(ports), *padded))))
        sel = self.h.state.action_profiles[LB + "ecmp_selector"]
        members = {}
        for i, port in enumerate(ports):
            mid = gid * 100 + i
            sel.insert_member(mid, ActionCall(LB + "ecmp_set_port", (port,)))
            members[mid] = 1
        sel.insert_group(gid, members)
        self.h.state.tables[LB + "ecmp_group"].insert(TableEntry(match=(Exact(gid),), group_id=gid))

    def route_eid(self, eid: int, gid: int, dst_index: int = 0) -> None:
        self.h.state.tables["MyIngress.fwd.eid_table"].insert(
            TableEntry(match=(Exact(eid),), action=ActionCall("MyIngress.fwd.eid_to_group", (gid, dst_index))))

    def route_ipv4(self, prefix: int, plen: int, gid: int, dst_index: int = 0) -> None:
        self.h.state.tables["MyIngress.fwd.ipv4_lpm"].insert(
            TableEntry(match=(Lpm(prefix, plen),),
                       action=ActionCall("MyIngress.fwd.ipv4_to_group", (gid, dst_index))))

    def set_ecn(self, port: int, kmin: int, kmax: int, pmax: float) -> None:
        self.h.state.tables["MyEgress.ecn.ecn_config"].insert(
            TableEntry(match=(Exact(port),),
                       action=ActionCall("MyEgress.ecn.set_ecn_thresholds",
                                         (kmin, kmax, min(65535, round(pmax * 65536))))))

    def set_down(self, port: int, down: bool = True) -> None:
        self.h.state.registers["port_down"].write(port, int(down))

    def register(self, name: str, index: int) -> int:
        return self.h.state.registers[name].read(index)

    def counter(self, name: str, index: int) -> tuple[int, int]:
        return self.h.state.counters[name].read(index)

    # ---------------------------------------------------------------- data plane
    def send(self, port: int, frame: bytes) -> list[tuple[int, bytes]]:
        return self.h.send(port, frame)

    def send_one(self, port: int, frame: bytes) -> tuple[int, bytes]:
        out = self.h.send(port, frame)
        assert len(out) == 1, f"expected one frame out, got {out}"
        return out[0]

    def load_port(self, port: int, depth: int) -> None:
        """Give `port` a queue of `depth` packets and let one packet leave through it,
        so that egress records the depth (port_qdepth) as it would in a real switch."""
        self.h.set_queue_depth(port, depth)
        frame = bytes(CpuPacketOut(egress_port=port) / Ether() / EthPlus(dst_id=1, ect=0) / PAYLOAD)
        assert [p for p, _ in self.h.send(CPU_PORT, frame)] == [port]

    def ports_used(self, frames: Iterable[bytes], port: int = 1) -> Counter[int]:
        used: Counter[int] = Counter()
        for frame in frames:
            for out_port, _ in self.h.send(port, frame):
                used[out_port] += 1
        return used


def ethplus_frame(dst_id: int = 700, src_id: int = 1, entropy: int = 0, seq: int = 0, ect: int = 1,
                  hops: int = 8) -> bytes:
    return bytes(Ether(dst="02:00:00:00:00:0b", src="02:00:00:00:00:0a")
                 / EthPlus(dst_id=dst_id, src_id=src_id, entropy=entropy, seq=seq, ect=ect, hop_limit=hops)
                 / PAYLOAD)


def roce_frame(dst: str = "10.1.0.2", sport: int = 49152, ecn: int = 2, src: str = "10.0.0.1") -> bytes:
    return bytes(Ether(dst="02:00:00:00:00:ee", src="02:00:00:00:00:0a")
                 / IP(src=src, dst=dst, tos=ecn) / UDP(sport=sport, dport=UDP_PORT_ROCE)
                 / RoCEv2BTH(psn=1) / PAYLOAD)


def probe_frame(dst_index: int, qdepth: int, hops: int = 4) -> bytes:
    return bytes(Ether(dst="ff:ff:ff:ff:ff:ff", src="02:00:00:00:00:0c")
                 / EthPlus(pkt_type=PKT_PROBE, src_id=9, ect=0, hop_limit=hops)
                 / EthPlusProbe(dst_index=dst_index, path_qdepth=qdepth))


def ethplus_source_ok() -> bool:
    """Compile once up front so a compiler error shows as itself, not as N fixture errors."""
    return _ethplus_source_ok()


@functools.cache
def _ethplus_compiled() -> CompiledProgram:
    """ethplus.p4 preprocessed and compiled once per test process: `compile_file` runs cpp on every call (its
    cache is keyed by the preprocessed text), ~0.15 s each, and the data-plane tests make ~150 switches."""
    from p4exec.compiler.program import compile_file

    return compile_file(str(ETHPLUS_P4))


def new_switch(seed: int = 1) -> EthPlusSwitch:
    """A fresh switch: its own runtime state and pipeline, loaded from the shared compiled program."""
    from p4exec.harness import Harness
    from p4exec.v1model.loader import load

    return EthPlusSwitch(Harness(load(_ethplus_compiled(), seed)))
