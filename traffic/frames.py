"""Frame templates: built once per flow with Scapy, then stamped with sequence numbers as raw bytes.

Scapy builds a few thousand packets per second, a raw AF_PACKET send manages far more, so Scapy only
builds the template and the hot path writes the PSN and ethlab's probe record into a reused buffer.

Every data frame carries, at the start of its payload, ethlab's probe record (`PROBE`): magic, version,
flags, flow id, sequence number, packet count of the flow and the send time. Receivers read it at a fixed
offset that depends only on the frame format, so loss, reorder and duplicates are counted the same way for
every format.

Feedback frames (ACK/NAK/CNP of the reliable transports, `traffic.transport`) travel the other way through
the same switches: RoCEv2 BTH opcode RC ACK (0x11) or CNP (0x81), or ETH+ pkt_type ack, never ECN-capable,
with ethlab's feedback record (`FEEDBACK`, probe flags bit 0 set) where the probe record would be. A data
frame trimmed by a switch (payload cut at a full queue, see p4src/include/trim.p4) is recognised by the
trimmed DSCP (RoCEv2) or the ETH+ `trimmed` bit; its probe record survives the cut.

Formats (headers from `traffic/layers.py`, which mirror `p4src/include/headers.p4`):
- "roce" (scale-out): Ethernet / IPv4 (ECT(0) when ECN-capable) / UDP 4791 / BTH (dest QP = flow id,
  PSN = sequence) / payload / ICRC (left zero, nobody checks it in the emulator). CE = IPv4 ECN bits 11.
- "ethplus" (scale-up): Ethernet / ETH+ (src/dst endpoint id, plane, entropy from the flow, seq = sequence,
  ect when ECN-capable) / payload. CE = the ETH+ ce bit; the path's max queue depth is read back for HPCC.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from p4src.wire import (
    BTH_BYTES,
    BTH_CNP,
    BTH_RC_ACK,
    DSCP_TRIMMED,
    ETHERNET_BYTES,
    ETHERTYPE_ETHPLUS,
    ETHERTYPE_IPV4,
    ETHPLUS_BYTES,
    ICRC_BYTES,
    IPPROTO_UDP,
    IPV4_BYTES,
    PKT_ACK,
    UDP_BYTES,
    UDP_PORT_ROCE,
)
from traffic.layers import EthPlus, RoCEv2BTH
from traffic.transport.base import CNP, Feedback

ROCE_PORT = UDP_PORT_ROCE
PROBE = struct.Struct("!HBBIIIQ")  # magic, version, flags, flow, seq, npkts, tx_ns
PSN_PROBE = struct.Struct("!I" + PROBE.format[1:])  # a byte and a 3-byte PSN, then the probe record
PROBE_MAGIC = 0xE7AB
PROBE_VERSION = 1
FLAG_FEEDBACK = 0x01
#: magic, version, flags, flow, kind, cum, psn, sack, qdepth, echoed send time (ethlab's feedback record, 40 B)
FEEDBACK = struct.Struct("!HBBIB3xIIQiQ")
FEEDBACK_BODY = struct.Struct("!B3xIIQiQ")  # the feedback record after the 8 bytes it shares with PROBE
PSN_FEEDBACK = struct.Struct("!I" + FEEDBACK.format[1:])  # a byte and a 3-byte PSN, then the feedback record
ICRC_LEN = ICRC_BYTES
ETH_IPV4 = ETHERTYPE_IPV4.to_bytes(2, "big")
UDP_PROTO = IPPROTO_UDP
ROCE_PORT_BYTES = ROCE_PORT.to_bytes(2, "big")
ROCE_HEADERS = ETHERNET_BYTES + IPV4_BYTES + UDP_BYTES + BTH_BYTES
BTH_UD_SEND_ONLY = 0x64


@dataclass(frozen=True)
class Addr:
    """Layer-2/3 identity of one endpoint plane as seen on the wire."""

    mac: str
    ip: str
    endpoint: int = 0
    plane: int = 0


def entropy(flow: int) -> int:
    """UDP source port from the flow id (RoCEv2 uses it for ECMP entropy): spreads flows over paths."""
    return 0xC000 | ((flow * 2654435761) >> 7 & 0x3FFF)


@dataclass(slots=True)
class Template:
    """A frame with a hole for the PSN and the probe record; `buf` is reused for every send. (Slots: one is made
    per flow before a run, 261,632 at UPN 512, and `stamp` reads its fields per frame.)"""

    buf: bytearray
    psn_off: int  # 3 bytes, big endian; -1 when the format has no PSN field
    probe_off: int
    entropy_off: int = -1  # 2 bytes: the path entropy (UDP source port / ETH+ entropy)
    #: the probe record right after the PSN (RoCEv2: BTH's PSN, then the payload): both written by one pack,
    #: starting at the byte before the PSN, which is rewritten with its own value
    _joint: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._joint = self.psn_off >= 1 and self.psn_off + 3 == self.probe_off

    def stamp(self, flow: int, seq: int, npkts: int, tx_ns: int) -> bytearray:
        buf = self.buf
        if self._joint:
            off = self.psn_off - 1
            PSN_PROBE.pack_into(buf, off, buf[off] << 24 | seq & 0xFFFFFF, PROBE_MAGIC, PROBE_VERSION, 0, flow, seq,
                                npkts, tx_ns)
            return buf
        if self.psn_off >= 0:
            self.buf[self.psn_off:self.psn_off + 3] = (seq & 0xFFFFFF).to_bytes(3, "big")
        PROBE.pack_into(self.buf, self.probe_off, PROBE_MAGIC, PROBE_VERSION, 0, flow, seq, npkts, tx_ns)
        return self.buf

    def stamp_feedback(self, flow: int, fb: Feedback) -> bytearray:
        """Fill a feedback template (made by `FrameFormat.build_feedback`) with one ACK/NAK/CNP."""
        buf = self.buf
        kind, cum, psn, sack, qdepth, echo_ns = fb
        if self._joint:  # RoCEv2: BTH's PSN and the record in one pack, the opcode says ACK or CNP
            off = self.psn_off - 1
            PSN_FEEDBACK.pack_into(buf, off, buf[off] << 24 | cum & 0xFFFFFF, PROBE_MAGIC, PROBE_VERSION,
                                   FLAG_FEEDBACK, flow, kind, cum, psn, sack, qdepth, echo_ns)
            if off == ROCE_HEADERS - 4:
                buf[ROCE_HEADERS - 12] = BTH_CNP if kind == CNP else BTH_RC_ACK
            return buf
        off = self.psn_off
        if off >= 0:
            buf[off:off + 3] = (cum & 0xFFFFFF).to_bytes(3, "big")
            if off == ROCE_HEADERS - 3:  # RoCEv2: the BTH opcode says ACK or CNP
                buf[ROCE_HEADERS - 12] = BTH_CNP if kind == CNP else BTH_RC_ACK
        FEEDBACK.pack_into(buf, self.probe_off, PROBE_MAGIC, PROBE_VERSION, FLAG_FEEDBACK, flow, kind,
                           cum, psn, sack, qdepth, echo_ns)
        return buf


def roce_overhead() -> int:
    """Bytes per frame that are not payload, for the RoCEv2 format (probe record counts as payload)."""
    return ROCE_HEADERS + ICRC_LEN


def roce_template(src: Addr, dst: Addr, flow: int, payload_len: int, ecn: bool = True,
                  dst_mac: str | None = None) -> Template:
    """RoCEv2-like frame for `flow` with `payload_len` payload bytes (at least the probe record)."""
    payload_len = max(payload_len, PROBE.size)
    pkt = (Ether(src=src.mac, dst=dst_mac or dst.mac)
           / IP(src=src.ip, dst=dst.ip, tos=0x02 if ecn else 0x00, ttl=64, id=0, flags="DF")
           / UDP(sport=entropy(flow), dport=ROCE_PORT, chksum=0)
           / RoCEv2BTH(opcode=BTH_UD_SEND_ONLY, dest_qp=flow & 0xFFFFFF, psn=0)
           / Raw(bytes(payload_len + ICRC_LEN)))
    return Template(bytearray(bytes(pkt)), ROCE_HEADERS - 3, ROCE_HEADERS, 34)


def roce_feedback_template(src: Addr, dst: Addr, flow: int, dst_mac: str | None = None) -> Template:
    """RoCEv2 RC ACK frame from the data's receiver `src` back to its sender `dst` (not ECN-capable)."""
    pkt = (Ether(src=src.mac, dst=dst_mac or dst.mac)
           / IP(src=src.ip, dst=dst.ip, tos=0x00, ttl=64, id=0, flags="DF")
           / UDP(sport=entropy(flow), dport=ROCE_PORT, chksum=0)
           / RoCEv2BTH(opcode=BTH_RC_ACK, dest_qp=flow & 0xFFFFFF, psn=0)
           / Raw(bytes(FEEDBACK.size + ICRC_LEN)))
    return Template(bytearray(bytes(pkt)), ROCE_HEADERS - 3, ROCE_HEADERS, 34)


def _mac(text: str) -> bytes:
    got = _MACS.get(text)
    if got is None:
        got = _MACS[text] = bytes.fromhex(text.replace(":", ""))
    return got


def _ip(text: str) -> bytes:
    got = _IPS.get(text)
    if got is None:
        got = _IPS[text] = bytes(int(x) for x in text.split("."))
    return got


# A fabric has a few hundred addresses but a template per flow (UPN 512: 261,632 readdressed): each address's
# bytes are worked out once.
_MACS: dict[str, bytes] = {}
_IPS: dict[str, bytes] = {}


def _ip_checksum(header: bytes) -> int:
    total = sum(struct.unpack(f"!{len(header) // 2}H", header))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def roce_for_pair(base: Template, src: Addr, dst: Addr, dst_mac: str | None = None) -> Template:
    """Readdress a RoCEv2 template (MACs, IPv4 addresses, header checksum) without rebuilding it."""
    buf = bytearray(base.buf)
    buf[0:6] = _mac(dst_mac or dst.mac)
    buf[6:12] = _mac(src.mac)
    buf[26:30] = _ip(src.ip)
    buf[30:34] = _ip(dst.ip)
    buf[24:26] = b"\x00\x00"
    buf[24:26] = _ip_checksum(bytes(buf[14:34])).to_bytes(2, "big")
    return Template(buf, base.psn_off, base.probe_off, base.entropy_off)


def roce_for_flow(base: Template, flow: int) -> Template:
    """Copy a RoCEv2 template built for another flow of the same endpoints and retarget it: UDP source
    port (entropy) and BTH destination QP depend on the flow; the UDP checksum is zero, the IPv4 one does
    not cover them. Saves a Scapy build per flow."""
    buf = bytearray(base.buf)
    buf[34:36] = entropy(flow).to_bytes(2, "big")
    buf[47:50] = (flow & 0xFFFFFF).to_bytes(3, "big")
    return Template(buf, base.psn_off, base.probe_off, base.entropy_off)


@dataclass(slots=True)
class Parsed:
    """What a receiver needs from a data frame (or, with `feedback` set, what a sender needs from an
    ACK/NAK/CNP frame: then `seq`, `npkts`, `tx_ns` are 0)."""

    flow: int
    seq: int
    npkts: int
    tx_ns: int
    ce: bool
    qdepth: int  # path congestion field (ETH+); -1 when the format has none
    length: int
    trimmed: bool = False
    feedback: Feedback | None = None


_feedback = tuple.__new__  # a Feedback from its unpacked fields, without the named tuple's Python-level _make


def _parse_feedback(data: bytes, off: int, flow: int) -> Parsed | None:
    """The feedback record at `off`, whose first 8 bytes (magic, version, flags, flow) the caller checked."""
    n = len(data)
    if n < off + FEEDBACK.size:
        return None
    return Parsed(flow, 0, 0, 0, False, -1, n, False, _feedback(Feedback, FEEDBACK_BODY.unpack_from(data, off + 8)))


#: The fields parse_roce reads from a frame whose IPv4 header has no options (every frame ethlab sends): the
#: EtherType, version/IHL, TOS, protocol, UDP destination port and the probe record, in one unpack.
_ROCE_PLAIN = struct.Struct("!12xHBB7xB12xH16x" + PROBE.format[1:])
_ROCE_PLAIN_LEN = max(_ROCE_PLAIN.size, ROCE_HEADERS + PROBE.size)
_ROCE_FEEDBACK_BODY = ROCE_HEADERS + 8  # the feedback record after its magic, version, flags and flow
_ROCE_FEEDBACK_END = ROCE_HEADERS + FEEDBACK.size


def parse_roce(data: bytes) -> Parsed | None:
    """Parse an ethlab RoCEv2 data frame; None for anything else (ARP, IPv6 chatter, other UDP)."""
    if len(data) >= _ROCE_PLAIN_LEN and data[14] == 0x45:  # the common case, in one unpack
        etype, _vihl, tos, proto, dport, magic, ver, flags, flow, seq, npkts, tx_ns = _ROCE_PLAIN.unpack_from(data)
        if etype != ETHERTYPE_IPV4 or proto != UDP_PROTO or dport != ROCE_PORT or magic != PROBE_MAGIC or ver != PROBE_VERSION:
            return None
        if flags & FLAG_FEEDBACK:  # an ACK/NAK/CNP: its record at the fixed offset (`_parse_feedback`, inlined)
            n = len(data)
            if n < _ROCE_FEEDBACK_END:
                return None
            return Parsed(flow, 0, 0, 0, False, -1, n, False,
                          _feedback(Feedback, FEEDBACK_BODY.unpack_from(data, _ROCE_FEEDBACK_BODY)))
        return Parsed(flow, seq, npkts, tx_ns, (tos & 0x03) == 0x03, -1, len(data), tos >> 2 == DSCP_TRIMMED)
    if len(data) < ROCE_HEADERS + PROBE.size or data[12:14] != ETH_IPV4 or data[23] != UDP_PROTO:
        return None
    udp = 14 + (data[14] & 0x0F) * 4
    if data[udp + 2:udp + 4] != ROCE_PORT_BYTES:
        return None
    off = udp + 8 + 12
    magic, ver, flags, flow, seq, npkts, tx_ns = PROBE.unpack_from(data, off)
    if magic != PROBE_MAGIC or ver != PROBE_VERSION:
        return None
    if flags & FLAG_FEEDBACK:
        return _parse_feedback(data, off, flow)
    tos = data[15]
    return Parsed(flow, seq, npkts, tx_ns, (tos & 0x03) == 0x03, -1, len(data), tos >> 2 == DSCP_TRIMMED)


# --------------------------------------------------------------------------------------------- ETH+
ETHPLUS_HEADERS = ETHERNET_BYTES + ETHPLUS_BYTES
ETHPLUS_TYPE_BYTES = ETHERTYPE_ETHPLUS.to_bytes(2, "big")


def ethplus_overhead() -> int:
    return ETHPLUS_HEADERS


def ethplus_template(src: Addr, dst: Addr, flow: int, payload_len: int, ecn: bool = True,
                     dst_mac: str | None = None) -> Template:
    """ETH+ data frame from endpoint `src.endpoint` to `dst.endpoint` on `src.plane`."""
    payload_len = max(payload_len, PROBE.size)
    pkt = (Ether(src=src.mac, dst=dst_mac or dst.mac, type=ETHERTYPE_ETHPLUS)
           / EthPlus(plane=src.plane & 0x3, ect=1 if ecn else 0, ce=0, dst_id=dst.endpoint & 0x3FF,
                     src_id=src.endpoint & 0x3FF, entropy=entropy(flow), seq=0)
           / Raw(bytes(payload_len)))
    return Template(bytearray(bytes(pkt)), 22, ETHPLUS_HEADERS, 18)


def ethplus_feedback_template(src: Addr, dst: Addr, flow: int, dst_mac: str | None = None) -> Template:
    """ETH+ ack frame (pkt_type ack, seq = cumulative PSN) from the data's receiver back to its sender."""
    pkt = (Ether(src=src.mac, dst=dst_mac or dst.mac, type=ETHERTYPE_ETHPLUS)
           / EthPlus(pkt_type=PKT_ACK, plane=src.plane & 0x3, ect=0, ce=0, dst_id=dst.endpoint & 0x3FF,
                     src_id=src.endpoint & 0x3FF, entropy=entropy(flow), seq=0)
           / Raw(bytes(FEEDBACK.size)))
    return Template(bytearray(bytes(pkt)), 22, ETHPLUS_HEADERS, 18)


def ethplus_for_pair(base: Template, src: Addr, dst: Addr, dst_mac: str | None = None) -> Template:
    """Readdress an ETH+ template: MACs, plane bits, endpoint ids (hop limit and flags kept)."""
    buf = bytearray(base.buf)
    buf[0:6] = _mac(dst_mac or dst.mac)
    buf[6:12] = _mac(src.mac)
    buf[14] = (buf[14] & ~0x0C & 0xFF) | (src.plane & 0x3) << 2
    hop = buf[15] >> 4
    buf[15:18] = (hop << 20 | (dst.endpoint & 0x3FF) << 10 | (src.endpoint & 0x3FF)).to_bytes(3, "big")
    return Template(buf, base.psn_off, base.probe_off, base.entropy_off)


def ethplus_for_flow(base: Template, flow: int) -> Template:
    buf = bytearray(base.buf)
    buf[18:20] = entropy(flow).to_bytes(2, "big")
    return Template(buf, base.psn_off, base.probe_off, base.entropy_off)


def parse_ethplus(data: bytes) -> Parsed | None:
    if len(data) < ETHPLUS_HEADERS + PROBE.size or data[12:14] != ETHPLUS_TYPE_BYTES:
        return None
    magic, ver, flags, flow, seq, npkts, tx_ns = PROBE.unpack_from(data, ETHPLUS_HEADERS)
    if magic != PROBE_MAGIC or ver != PROBE_VERSION:
        return None
    ptype = (data[14] >> 4) & 0x3
    if ptype == PKT_ACK and flags & FLAG_FEEDBACK:
        return _parse_feedback(data, ETHPLUS_HEADERS, flow)
    if ptype != 0:  # data frames only
        return None
    return Parsed(flow, seq, npkts, tx_ns, bool(data[14] & 0x01), int.from_bytes(data[20:22], "big"), len(data),
                  bool(data[25] & 0x80))


@dataclass(frozen=True)
class FrameFormat:
    """How one wire format builds, retargets and parses ethlab's data frames."""

    name: str
    l3_overhead: int  # bytes counted against the MTU besides the payload
    build: Callable[..., Template]
    for_pair: Callable[..., Template]
    for_flow: Callable[[Template, int], Template]
    parse: Callable[[bytes], Parsed | None]
    build_feedback: Callable[..., Template]

    def payload_per_packet(self, mtu: int) -> int:
        return mtu - self.l3_overhead


FORMATS = {
    "roce": FrameFormat("roce", roce_overhead() - 14, roce_template, roce_for_pair, roce_for_flow, parse_roce,
                         roce_feedback_template),
    "ethplus": FrameFormat("ethplus", ethplus_overhead() - 14, ethplus_template, ethplus_for_pair,
                           ethplus_for_flow, parse_ethplus, ethplus_feedback_template),
}
