"""The constants of `p4src/include/headers.p4` that software outside the switch needs, in one place.

The controller (probe frames, `lb_config` modes) and the traffic tools (Scapy layers) take them from here;
tests/controller/test_ethplus_constants.py parses headers.p4 and checks every name below against it, so the
P4 program and its users cannot drift apart.
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

# lb_tuning flags (switch-local adaptivity)
LBF_LOCAL_LOAD = 0x01
LBF_DRAIN_GAP = 0x02
LBF_RANDOM_TIE = 0x04
LBF_NEAR_BEST = 0x08
LBF_TRACE = 0x10

PUNT_ARP = 1

PKT_TYPES = {PKT_DATA: "data", PKT_ACK: "ack", PKT_PROBE: "probe", PKT_CREDIT: "credit"}
LB_MODES = {LB_ECMP: "ecmp", LB_SPRAY: "spray", LB_FLOWLET: "flowlet", LB_ADAPTIVE: "adaptive"}
