"""The adaptive policy's probe sender (HULA-style, docs/ethplus-header.md "Probe body").

Probes are never made inside a switch: the controller injects them with packet-out. For every destination
endpoint, the switch the endpoint hangs off sends one probe out of each of its fabric-facing ports; the next
switch learns "data for this destination may leave through the port the probe came in on", with the path's
queue depth. Transit switches (no endpoints attached) pass probes on to their other fabric ports through a
multicast group (`probe_mgrp`), edge switches consume them, so in a leaf-spine every leaf learns the best
spine towards every remote endpoint. `hop_limit` bounds any longer wandering.

This module only plans and lays out probes; the sender (controller/watch.py) says when a round is due and the
fabric (controller/fabric.py) sends it from the switches that are up.
"""

from __future__ import annotations

from dataclasses import dataclass

from p4src.wire import ETHERTYPE_ETHPLUS, PKT_PROBE
from topologies.model import Topology, switch_mac

PROBE_MGRP = 1000  # multicast group id used for passing probes on (transit switches only)
SEQ_OFFSET = 14 + 12 + 4  # probe_seq: the last two bytes of the probe body


def fabric_ports(topo: Topology, switch: str) -> list[int]:
    return sorted(p for p, link in topo.ports(switch).items() if topo.nodes[link.other(switch).owner].is_switch)


def is_edge(topo: Topology, switch: str) -> bool:
    return any(not topo.nodes[link.other(switch).owner].is_switch for link in topo.ports(switch).values())


def probe_flood_ports(topo: Topology, switch: str) -> list[int]:
    """Ports a transit switch passes probes on to (empty for edge switches, which consume probes)."""
    return [] if is_edge(topo, switch) else fabric_ports(topo, switch)


def probe_frame(src_mac: str, plane: int, dst_index: int, hop_limit: int = 4, seq: int = 0) -> bytes:
    """Ethernet + ETH+ (pkt_type probe) + probe body, laid out as in docs/ethplus-header.md."""
    eth = bytes.fromhex("ff" * 6) + bytes.fromhex(src_mac.replace(":", "")) + ETHERTYPE_ETHPLUS.to_bytes(2, "big")
    word0 = (1 << 30) | (PKT_PROBE << 28) | ((plane & 3) << 26) | (0 << 25) | (0 << 24) | ((hop_limit & 15) << 20)
    word0 |= (dst_index & 0x3FF) << 10
    header = word0.to_bytes(4, "big") + bytes(8)  # entropy, max_qdepth, seq, credits all 0
    body = dst_index.to_bytes(2, "big") + bytes(2) + (seq & 0xFFFF).to_bytes(2, "big")
    return eth + header + body


@dataclass(frozen=True)
class Probe:
    switch: str
    port: int
    frame: bytes


def probe_plan(topo: Topology) -> list[Probe]:
    """One probe per (destination endpoint, fabric port of the edge switch it is attached to)."""
    plan: list[Probe] = []
    for sw in topo.switches:
        uplinks = fabric_ports(topo, sw.name)
        if not uplinks or not is_edge(topo, sw.name):
            continue
        for _port, link in sorted(topo.ports(sw.name).items()):
            far = link.other(sw.name).owner
            if topo.nodes[far].is_switch:
                continue
            eid = topo.endpoints[far].eid
            for up in uplinks:
                plan.append(Probe(sw.name, up, probe_frame(switch_mac(sw.device_id or 0, up), link.plane, eid)))
    return plan


def with_seq(frame: bytes, seq: int) -> bytes:
    """The probe frame carrying round number `seq` in its probe_seq field."""
    return frame[:SEQ_OFFSET] + (seq & 0xFFFF).to_bytes(2, "big") + frame[SEQ_OFFSET + 2:]
