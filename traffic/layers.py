"""Scapy layers for the headers of ``p4src/ethplus.p4``.

Field names and bit widths are exactly those of ``p4src/include/headers.p4``
(a test compares them), so a frame built here parses in the switch and a frame
captured from the switch dissects here. Importing this module binds the layers
like Scapy's own: ``Ether(type=0x88B5)`` -> :class:`EthPlus`, ETH+ probes ->
:class:`EthPlusProbe`, ``UDP(dport=4791)`` -> :class:`RoCEv2BTH`, and the CPU
headers -> ``Ether``.

The ETH+ header is ethlab's model (see ``docs/ethplus-header.md``), not the
ETH+ 1.1 wire format. ``scapy.contrib.roce.BTH`` is not used because it folds
the ICRC into the header; the switch parses only the 12-byte BTH, and the ICRC
stays at the end of the payload.
"""

from __future__ import annotations

from scapy.fields import (
    BitEnumField,
    BitField,
    ByteEnumField,
    ByteField,
    IntField,
    LongField,
    ShortField,
    XShortField,
)
from scapy.layers.inet import UDP
from scapy.layers.l2 import Ether
from scapy.packet import Packet, bind_layers

# The constants of p4src/include/headers.p4, from the one module checked against it.
from p4src.wire import (
    CPU_PORT,
    ETHERTYPE_ETHPLUS,
    ETHPLUS_VERSION,
    LB_ADAPTIVE,
    LB_ECMP,
    LB_FLOWLET,
    LB_SPRAY,
    PKT_ACK,
    PKT_CREDIT,
    PKT_DATA,
    PKT_PROBE,
    PKT_TYPES,
    PUNT_ARP,
    UDP_PORT_ROCE,
)

__all__ = [
    "CPU_PORT",
    "ETHERTYPE_ETHPLUS",
    "ETHPLUS_VERSION",
    "LB_ADAPTIVE",
    "LB_ECMP",
    "LB_FLOWLET",
    "LB_SPRAY",
    "PKT_ACK",
    "PKT_CREDIT",
    "PKT_DATA",
    "PKT_PROBE",
    "PUNT_ARP",
    "UDP_PORT_ROCE",
    "CpuPacketIn",
    "CpuPacketOut",
    "EthPlus",
    "EthPlusProbe",
    "IncAggregation",
    "RoCEv2BTH",
]


class EthPlus(Packet):
    """ethlab's 12-byte ETH+ compact scale-up header (after Ethernet)."""

    name = "ETH+"
    fields_desc = [
        BitField("version", ETHPLUS_VERSION, 2),
        BitEnumField("pkt_type", PKT_DATA, 2, PKT_TYPES),
        BitField("plane", 0, 2),
        BitField("ect", 1, 1),
        BitField("ce", 0, 1),
        BitField("hop_limit", 15, 4),
        BitField("dst_id", 0, 10),
        BitField("src_id", 0, 10),
        ShortField("entropy", 0),
        ShortField("max_qdepth", 0),
        BitField("seq", 0, 24),
        BitField("trimmed", 0, 1),
        BitField("credits", 0, 7),
    ]

    def mysummary(self) -> str:
        return self.sprintf(
            "ETH+ %pkt_type% %src_id%>%dst_id% plane=%plane% seq=%seq% ce=%ce% q=%max_qdepth% trim=%trimmed%"
        )


class EthPlusProbe(Packet):
    """Probe body (ETH+ pkt_type probe): path congestion towards dst_index."""

    name = "ETH+ probe"
    fields_desc = [
        ShortField("dst_index", 0),
        ShortField("path_qdepth", 0),
        ShortField("probe_seq", 0),
    ]


class CpuPacketOut(Packet):
    """packet_out controller header: prepended by the controller on the CPU port."""

    name = "CPU packet-out"
    fields_desc = [
        BitField("egress_port", 0, 9),
        BitField("_pad", 0, 7),
    ]


class CpuPacketIn(Packet):
    """packet_in controller header: prepended by the switch on the CPU port."""

    name = "CPU packet-in"
    fields_desc = [
        BitField("ingress_port", 0, 9),
        BitField("reason", 0, 8),
        BitField("_pad", 0, 7),
    ]


class IncAggregation(Packet):
    """The 20-byte aggregation header of ethplus_inc.p4 (`inc_t` of p4src/include/inc_headers.p4), after ETH+ in
    a frame of EtherType 0x88B6; the INC_ELEMS 32-bit elements follow as payload. Not bound to an EtherType:
    0x88B6 is also the link layer's shim (linklayer/shim.py), so frames are built as
    ``Ether(type=0x88B6) / EthPlus() / IncAggregation() / Raw(elements)``."""

    name = "INC"
    fields_desc = [
        ShortField("job_id", 0),
        ShortField("slot", 0),
        BitField("version", 0, 1),
        BitField("is_result", 0, 1),
        BitField("_pad", 0, 6),
        ByteField("level", 0),
        ShortField("ranks", 0),
        IntField("chunk", 0),
        LongField("bitmap", 0),
    ]


ROCE_OPCODES = {
    0x04: "RC_SEND_ONLY",
    0x0A: "RC_RDMA_WRITE_ONLY",
    0x11: "RC_ACK",
    0x64: "UD_SEND_ONLY",
}


class RoCEv2BTH(Packet):
    """InfiniBand Base Transport Header as carried on UDP 4791 (12 bytes, no ICRC)."""

    name = "RoCEv2 BTH"
    fields_desc = [
        ByteEnumField("opcode", 0x0A, ROCE_OPCODES),
        BitField("se", 0, 1),
        BitField("migreq", 0, 1),
        BitField("pad_count", 0, 2),
        BitField("tver", 0, 4),
        XShortField("pkey", 0xFFFF),
        BitField("fecn", 0, 1),
        BitField("becn", 0, 1),
        BitField("resv6", 0, 6),
        BitField("dest_qp", 0, 24),
        BitField("ack_req", 0, 1),
        BitField("resv7", 0, 7),
        BitField("psn", 0, 24),
    ]


bind_layers(Ether, EthPlus, type=ETHERTYPE_ETHPLUS)
bind_layers(EthPlus, EthPlusProbe, pkt_type=PKT_PROBE)
bind_layers(UDP, RoCEv2BTH, dport=UDP_PORT_ROCE)
bind_layers(CpuPacketIn, Ether)
bind_layers(CpuPacketOut, Ether)
