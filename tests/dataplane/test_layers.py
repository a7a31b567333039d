"""Scapy layers in traffic/layers.py match p4src/include/headers.p4 and round-trip.

Why: traffic/ builds frames with these layers and the switch parses them with
the P4 parser; a field of the wrong width or order would silently corrupt
every frame, so the layers are checked against the P4 source itself.
"""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Packet, Raw

from traffic.layers import (
    ETHERTYPE_ETHPLUS,
    PKT_PROBE,
    UDP_PORT_ROCE,
    CpuPacketIn,
    CpuPacketOut,
    EthPlus,
    EthPlusProbe,
    RoCEv2BTH,
)

HEADERS_P4 = Path(__file__).resolve().parents[2] / "p4src" / "include" / "headers.p4"


def p4_headers() -> dict[str, list[tuple[str, int]]]:
    """Header name -> [(field, bits)] read from headers.p4 (typedefs resolved)."""
    text = re.sub(r"/\*.*?\*/", "", HEADERS_P4.read_text(), flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    typedefs = {m[1]: int(m[0]) for m in re.findall(r"typedef\s+bit<(\d+)>\s+(\w+)\s*;", text)}
    out: dict[str, list[tuple[str, int]]] = {}
    for name, body in re.findall(r"header\s+(\w+)\s*\{(.*?)\}", text, flags=re.S):
        fields = []
        for ftype, fname in re.findall(r"(bit<\d+>|\w+)\s+(\w+)\s*;", body):
            m = re.fullmatch(r"bit<(\d+)>", ftype)
            fields.append((fname, int(m[1]) if m else typedefs[ftype]))
        out[name] = fields
    return out


def scapy_fields(cls: type[Packet]) -> list[tuple[str, int]]:
    """[(field, bits)] of a Scapy layer (bit fields report their own size)."""
    # bit fields carry their width in `size`; byte-aligned fields only `sz`
    return [(f.name, f.size if hasattr(f, "size") else f.sz * 8) for f in cls.fields_desc]


def test_layers_match_p4_headers_field_for_field() -> None:
    p4 = p4_headers()
    pairs = {
        "ethplus_t": EthPlus,
        "ethplus_probe_t": EthPlusProbe,
        "packet_out_t": CpuPacketOut,
        "packet_in_t": CpuPacketIn,
        "bth_t": RoCEv2BTH,
    }
    for header, cls in pairs.items():
        assert scapy_fields(cls) == p4[header], header
        assert len(bytes(cls())) * 8 == sum(bits for _, bits in p4[header]), header


def test_ethplus_sizes() -> None:
    assert len(bytes(EthPlus())) == 12
    assert len(bytes(EthPlusProbe())) == 6
    assert len(bytes(RoCEv2BTH())) == 12


def test_ethplus_bit_layout_is_big_endian_in_declaration_order() -> None:
    hdr = EthPlus(version=1, pkt_type=2, plane=3, ect=1, ce=0, hop_limit=0xA,
                  dst_id=0x3FF, src_id=0x001, entropy=0xBEEF, max_qdepth=0x1234,
                  seq=0xABCDEF, credits=0x42)
    # 01 10 11 1 0 | 1010 | 1111111111 | 0000000001  -> 0x6E AF FC 01
    assert bytes(hdr).hex() == "6eaffc01" "beef" "1234" "abcdef" "42"
    # the trimmed bit is the top bit of the last byte; credits the 7 below it
    assert bytes(EthPlus(trimmed=1, credits=0x42))[11] == 0xC2


def test_ethplus_data_frame_round_trip() -> None:
    frame = (Ether(dst="02:00:00:00:00:02", src="02:00:00:00:00:01")
             / EthPlus(dst_id=513, src_id=7, entropy=0x1234, seq=99, plane=1)
             / Raw(b"x" * 64))
    wire = bytes(frame)
    assert wire[12:14] == ETHERTYPE_ETHPLUS.to_bytes(2, "big")
    back = Ether(wire)
    assert back.haslayer(EthPlus)
    e = back[EthPlus]
    assert (e.dst_id, e.src_id, e.entropy, e.seq, e.plane, e.hop_limit) == (513, 7, 0x1234, 99, 1, 15)
    assert bytes(back) == wire
    assert back[Raw].load == b"x" * 64


def test_probe_round_trip_binds_on_pkt_type() -> None:
    frame = Ether() / EthPlus(pkt_type=PKT_PROBE, src_id=3, ect=0) / EthPlusProbe(
        dst_index=12, path_qdepth=40, probe_seq=5)
    back = Ether(bytes(frame))
    assert back[EthPlus].pkt_type == PKT_PROBE
    assert back.haslayer(EthPlusProbe)
    assert (back[EthPlusProbe].dst_index, back[EthPlusProbe].path_qdepth) == (12, 40)
    assert bytes(back) == bytes(frame)
    # a data frame does not grow a probe layer
    assert not Ether(bytes(Ether() / EthPlus() / Raw(b"abcdef"))).haslayer(EthPlusProbe)


def test_rocev2_round_trip_binds_on_udp_4791() -> None:
    frame = (Ether() / IP(src="10.0.0.1", dst="10.1.0.2", tos=0x02)
             / UDP(sport=49152, dport=UDP_PORT_ROCE)
             / RoCEv2BTH(opcode=0x0A, dest_qp=0x123456, psn=0xFFFFFE, ack_req=1)
             / Raw(b"\x00" * 256 + b"ICRC"))
    wire = bytes(frame)
    back = Ether(wire)
    assert back.haslayer(RoCEv2BTH)
    b = back[RoCEv2BTH]
    assert (b.opcode, b.dest_qp, b.psn, b.ack_req, b.pkey) == (0x0A, 0x123456, 0xFFFFFE, 1, 0xFFFF)
    assert bytes(back) == wire
    # binding also fills the port when building
    assert bytes(UDP() / RoCEv2BTH())[2:4] == UDP_PORT_ROCE.to_bytes(2, "big")


def test_cpu_headers_round_trip() -> None:
    pin = CpuPacketIn(ingress_port=300, reason=1) / Ether(type=0x0806) / Raw(b"\x00" * 28)
    wire = bytes(pin)
    assert wire[:3] == bytes([300 >> 1, ((300 & 1) << 7) | (1 >> 1), (1 & 1) << 7])
    back = CpuPacketIn(wire)
    assert (back.ingress_port, back.reason) == (300, 1)
    assert back.haslayer(Ether) and back[Ether].type == 0x0806

    pout = CpuPacketOut(egress_port=257) / Ether() / EthPlus(pkt_type=PKT_PROBE) / EthPlusProbe()
    back2 = CpuPacketOut(bytes(pout))
    assert back2.egress_port == 257
    assert back2.haslayer(EthPlusProbe)
    assert bytes(pout)[:2] == bytes([257 >> 1, (257 & 1) << 7])


@settings(max_examples=150, deadline=None)
@given(
    version=st.integers(0, 3), pkt_type=st.sampled_from([0, 1, 3]), plane=st.integers(0, 3),
    ect=st.integers(0, 1), ce=st.integers(0, 1), hop_limit=st.integers(0, 15),
    dst_id=st.integers(0, 1023), src_id=st.integers(0, 1023), entropy=st.integers(0, 0xFFFF),
    max_qdepth=st.integers(0, 0xFFFF), seq=st.integers(0, 0xFFFFFF), trimmed=st.integers(0, 1),
    credits=st.integers(0, 127),
)
def test_ethplus_any_values_round_trip(**values: int) -> None:
    wire = bytes(Ether() / EthPlus(**values))
    e = Ether(wire)[EthPlus]
    assert {k: getattr(e, k) for k in values} == values
    # independent decoding of the 96-bit word, in P4 declaration order
    word = int.from_bytes(wire[14:26], "big")
    pos = 96
    for name, bits in p4_headers()["ethplus_t"]:
        pos -= bits
        assert (word >> pos) & ((1 << bits) - 1) == values[name], name


def test_inc_layer_matches_inc_headers_and_the_endpoint_packer() -> None:
    """The INC header (inc_headers.p4's inc_t) field for field, and a frame built with the layers is the byte
    string traffic/inc/wire.py packs for the same header and elements."""
    import numpy as np

    from traffic.inc import wire
    from traffic.layers import IncAggregation

    text = re.sub(r"/\*.*?\*/", "", (HEADERS_P4.parent / "inc_headers.p4").read_text(), flags=re.S)
    body = re.search(r"header\s+inc_t\s*\{(.*?)\}", text, flags=re.S)
    assert body is not None
    fields = [(n, int(b)) for b, n in re.findall(r"bit<(\d+)>\s+(\w+)\s*;", body[1])]
    assert scapy_fields(IncAggregation) == fields
    hdr = wire.IncHeader(job=7, slot=3, version=1, is_result=0, level=0, ranks=1, chunk=0x10203, bitmap=5)
    data = np.arange(wire.ELEMS, dtype=np.int32) - 100
    mac_d, mac_s = bytes.fromhex("02e100000002"), bytes.fromhex("02e100000001")
    packed = wire.pack(mac_d, mac_s, 1, 9, hdr, data, seq=4)
    built = (Ether(dst="02:e1:00:00:00:02", src="02:e1:00:00:00:01", type=wire.ETHERTYPE_INC)
             / EthPlus(pkt_type=0, plane=1, ect=0, hop_limit=15, dst_id=0, src_id=9, entropy=0x0203, seq=4)
             / IncAggregation(job_id=7, slot=3, version=1, ranks=1, chunk=0x10203, bitmap=5)
             / Raw(data.astype(">i4").tobytes()))
    assert bytes(built) == packed
