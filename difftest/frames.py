"""Seeded random frames for the differential: what a leaf sees in an AI fabric, and what it should survive.

Kinds, in equal parts unless weighted: ETH+ data/ack/credit frames (to known and unknown endpoints, any hop
limit, plane, ECN bits), ETH+ probes, RoCEv2 (Ethernet/IPv4/UDP 4791/BTH; known and unknown addresses,
TTL 0..255, wrong checksums, IPv4 options), ARP, CPU packet-out frames on the CPU port, and malformed
frames (cut at a random byte, random bytes, unknown EtherTypes). The ingress port is one of the switch's
ports, the CPU port for packet-out, now and then a port with no link.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import ARP, Ether
from scapy.packet import Raw

from p4src.wire import CPU_PORT, ETHERTYPE_ETHPLUS, PKT_PROBE, UDP_PORT_ROCE
from topologies.model import Topology, switch_mac
from traffic.inc.wire import ELEMS, ETHERTYPE_INC
from traffic.layers import CpuPacketOut, EthPlus, EthPlusProbe, IncAggregation, RoCEv2BTH

KINDS = ("ethplus", "probe", "roce", "arp", "packet_out", "malformed")
INC_KINDS = (*KINDS, "inc", "inc")  # ethplus_inc.p4: a quarter of the frames are aggregation frames


@dataclass(frozen=True)
class Frame:
    kind: str
    port: int
    data: bytes


class FrameGen:
    def __init__(self, topo: Topology, switch: str, ports: list[int], seed: int,
                 kinds: tuple[str, ...] = KINDS, inc_jobs: tuple[tuple[int, int], ...] = ()) -> None:
        """`inc_jobs`: (job id, slots) of the aggregation jobs the switch holds, for `inc` frames."""
        self.rng = random.Random(seed)
        self.kinds = kinds
        self.inc_jobs = inc_jobs
        self.ports = ports
        sw = topo.nodes[switch]
        self.switch_macs = [switch_mac(sw.device_id or 0, p) for p in ports]
        self.hosts = [(ep.eid, iface.mac, iface.ipv4) for ep in topo.endpoints.values()
                      for iface in ep.interfaces.values()]

    # ------------------------------------------------------------------ pieces
    def _port(self) -> int:
        r = self.rng
        return r.choice(self.ports) if r.random() < 0.97 else r.choice([0, 9, 17, 200, 511])

    def _host(self) -> tuple[int, str, str]:
        r = self.rng
        if r.random() < 0.85:
            return r.choice(self.hosts)
        eid = r.randrange(1, 1024)
        return eid, f"02:e1:00:00:{eid >> 8:02x}:{eid & 0xFF:02x}", f"10.0.{r.randrange(256)}.{r.randrange(256)}"

    def _payload(self) -> bytes:
        r = self.rng
        return bytes(r.randrange(256) for _ in range(r.choice([0, 1, 8, 64, r.randrange(0, 1200)])))

    def _ethplus(self) -> bytes:
        r = self.rng
        dst, src = self._host(), self._host()
        hdr = EthPlus(version=r.choice([1, 1, 1, 1, 0, 2, 3]), pkt_type=r.choice([0, 0, 0, 1, 3]),
                      plane=r.randrange(4), ect=r.randrange(2), ce=r.randrange(2) if r.random() < 0.2 else 0,
                      hop_limit=r.randrange(16), dst_id=dst[0] & 0x3FF, src_id=src[0] & 0x3FF,
                      entropy=r.randrange(1 << 16), max_qdepth=r.randrange(1 << 16) if r.random() < 0.3 else 0,
                      seq=r.randrange(1 << 24), trimmed=r.randrange(2) if r.random() < 0.1 else 0,
                      credits=r.randrange(128))
        return bytes(Ether(dst=dst[1], src=src[1], type=ETHERTYPE_ETHPLUS) / hdr / Raw(self._payload()))

    def _probe(self) -> bytes:
        r = self.rng
        src = self._host()
        return bytes(Ether(dst="ff:ff:ff:ff:ff:ff", src=src[1], type=ETHERTYPE_ETHPLUS)
                     / EthPlus(pkt_type=PKT_PROBE, plane=r.randrange(2), ect=0, hop_limit=r.randrange(16),
                               dst_id=r.randrange(1024), src_id=src[0] & 0x3FF)
                     / EthPlusProbe(dst_index=r.randrange(1 << 16) if r.random() < 0.2 else r.randrange(8),
                                    path_qdepth=r.randrange(1 << 16), probe_seq=r.randrange(1 << 16)))

    def _roce(self) -> bytes:
        r = self.rng
        dst, src = self._host(), self._host()
        ip = IP(src=src[2], dst=dst[2], ttl=r.choice([0, 1, 2, 64, 255, r.randrange(256)]),
                tos=r.randrange(256), id=r.randrange(1 << 16), flags=r.randrange(8) if r.random() < 0.1 else 0)
        if r.random() < 0.05:
            ip.options = [Raw(b"\x01\x01\x01\x00")]  # IPv4 options: ihl 6
        if r.random() < 0.05:
            ip.chksum = r.randrange(1 << 16)
        udp = UDP(sport=r.randrange(49152, 65536), dport=UDP_PORT_ROCE if r.random() < 0.9 else r.randrange(1 << 16))
        bth = RoCEv2BTH(opcode=r.choice([0x04, 0x0A, 0x11, 0x64]), dest_qp=r.randrange(1 << 24),
                        psn=r.randrange(1 << 24), ack_req=r.randrange(2), becn=r.randrange(2))
        dst_mac = r.choice(self.switch_macs) if r.random() < 0.7 else dst[1]
        return bytes(Ether(dst=dst_mac, src=src[1]) / ip / udp / bth / Raw(self._payload()))

    def _arp(self) -> bytes:
        r = self.rng
        src, dst = self._host(), self._host()
        op = r.choice([1, 2])
        return bytes(Ether(dst="ff:ff:ff:ff:ff:ff" if op == 1 else dst[1], src=src[1])
                     / ARP(op=op, hwsrc=src[1], psrc=src[2], pdst=dst[2]))

    def _packet_out(self) -> bytes:
        r = self.rng
        inner = self.rng.choice([self._ethplus, self._roce, self._arp])()
        return bytes(CpuPacketOut(egress_port=r.choice([*self.ports, 0, 511, CPU_PORT]))) + inner

    def _inc(self) -> bytes:
        r = self.rng
        job, slots = r.choice(self.inc_jobs) if self.inc_jobs and r.random() < 0.9 else (r.randrange(1, 4096), 4)
        src = self._host()
        eth = EthPlus(version=1 if r.random() < 0.95 else r.randrange(4), pkt_type=0, plane=0, ect=0,
                      hop_limit=r.choice([15, 15, 1, 0, r.randrange(16)]), dst_id=0, src_id=src[0] & 0x3FF,
                      entropy=r.randrange(1 << 16), seq=r.randrange(1 << 24))
        inc = IncAggregation(job_id=job, slot=r.randrange(slots + 1) if r.random() < 0.97 else r.randrange(1 << 16),
                             version=r.randrange(2), is_result=int(r.random() < 0.2), level=r.choice([0, 0, 1, 2]),
                             ranks=r.randrange(1, 5), chunk=r.randrange(3), bitmap=r.randrange(1 << 64)
                             if r.random() < 0.2 else 0)
        elems = r.randbytes(4 * ELEMS)
        if r.random() < 0.05:
            elems = elems[:r.randrange(len(elems))]  # the element list cut short: inc_data not valid
        dst = r.choice(self.switch_macs) if r.random() < 0.5 else self._host()[1]
        return bytes(Ether(dst=dst, src=src[1], type=ETHERTYPE_INC) / eth / inc / Raw(elems))

    def _malformed(self) -> bytes:
        r = self.rng
        pick = r.random()
        if pick < 0.6:
            whole = r.choice([self._ethplus, self._roce, self._arp, self._probe])()
            return whole[:r.randrange(0, len(whole))]
        if pick < 0.8:
            return bytes(r.randrange(256) for _ in range(r.randrange(0, 100)))
        return bytes(Ether(dst=r.choice(self.switch_macs), src=self._host()[1], type=r.randrange(1 << 16))
                     / Raw(self._payload()))

    # ------------------------------------------------------------------ frames
    def frame(self) -> Frame:
        kind = self.rng.choice(self.kinds)
        data = getattr(self, f"_{kind}")()
        port = CPU_PORT if kind == "packet_out" else self._port()
        return Frame(kind, port, data)

    def frames(self, n: int) -> list[Frame]:
        return [self.frame() for _ in range(n)]
