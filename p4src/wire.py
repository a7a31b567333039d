"""ETH+ wire constants: the values of `p4src/include/headers.p4` that software outside the switch needs.

The one copy outside the P4 program, kept beside it: the controller (probe frames, `lb_config` modes), the
traffic generator (Scapy layers, raw frame templates), vfabric and difftest import from here.
tests/p4src/test_wire.py parses headers.p4 and checks every constant and header size below against it, so
the P4 program and its users cannot drift apart. Pure Python, no imports: any package may use it.
"""

from __future__ import annotations

ETHERTYPE_IPV4 = 0x0800
ETHERTYPE_ARP = 0x0806
ETHERTYPE_ETHPLUS = 0x88B5
IPPROTO_UDP = 17
UDP_PORT_ROCE = 4791
CPU_PORT = 255
ETHPLUS_VERSION = 1

# pkt_type of the ETH+ header
PKT_DATA = 0
PKT_ACK = 1
PKT_PROBE = 2
PKT_CREDIT = 3

# lb_config modes (path selection)
LB_ECMP = 0
LB_SPRAY = 1
LB_FLOWLET = 2
LB_ADAPTIVE = 3

# lb_tuning flags (switch-local adaptivity, headers.p4)
LBF_LOCAL_LOAD = 0x01
LBF_DRAIN_GAP = 0x02
LBF_RANDOM_TIE = 0x04
LBF_NEAR_BEST = 0x08
LBF_TRACE = 0x10

# RoCEv2 BTH opcodes the program recognises as feedback (never trimmed, never ECN-marked)
BTH_RC_ACK = 0x11
BTH_CNP = 0x81

DSCP_TRIMMED = 0x21  # DSCP a switch writes into a trimmed RoCEv2 packet
PRIO_CONTROL = 7  # priority queue of control and feedback packets

PUNT_ARP = 1

PKT_TYPES = {PKT_DATA: "data", PKT_ACK: "ack", PKT_PROBE: "probe", PKT_CREDIT: "credit"}
LB_MODES = {LB_ECMP: "ecmp", LB_SPRAY: "spray", LB_FLOWLET: "flowlet", LB_ADAPTIVE: "adaptive"}

# Header sizes in bytes (headers.p4's `header X_t` declarations; tests check the bit widths add up)
HEADER_BYTES = {"ethernet_t": 14, "ethplus_t": 12, "ethplus_probe_t": 6, "arp_t": 28, "ipv4_t": 20, "udp_t": 8,
                "bth_t": 12, "packet_out_t": 2, "packet_in_t": 3}
ETHERNET_BYTES = HEADER_BYTES["ethernet_t"]
ETHPLUS_BYTES = HEADER_BYTES["ethplus_t"]
ETHPLUS_PROBE_BYTES = HEADER_BYTES["ethplus_probe_t"]
IPV4_BYTES = HEADER_BYTES["ipv4_t"]
UDP_BYTES = HEADER_BYTES["udp_t"]
BTH_BYTES = HEADER_BYTES["bth_t"]
ICRC_BYTES = 4  # RoCEv2's invariant CRC after the payload (not a P4 header: the program never parses it)
