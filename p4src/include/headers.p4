/* headers.p4 -- every header, constant and metadata field of ethplus.p4.
 *
 * The ETH+ compact header below is ethlab's MODEL of an ETH+-style scale-up
 * header, not the (unpublished) ETH+ 1.1 wire format; docs/ethplus-header.md
 * documents every field, its inspiration and the byte layout.
 * traffic/layers.py mirrors these headers field for field (names and widths).
 */
#ifndef ETHLAB_HEADERS_P4
#define ETHLAB_HEADERS_P4

/* ------------------------------------------------------------ constants */

const bit<16> ETHERTYPE_IPV4    = 0x0800;
const bit<16> ETHERTYPE_ARP     = 0x0806;
/* IEEE 802 "local experimental" EtherType 1: free for private protocols. */
const bit<16> ETHERTYPE_ETHPLUS = 0x88B5;

const bit<8>  IPPROTO_UDP   = 17;
const bit<16> UDP_PORT_ROCE = 4791;     /* RoCEv2, IANA-assigned */

/* BMv2's usual --cpu-port; packet-in/out travel on it with a CPU header. */
const bit<9>  CPU_PORT = 255;

const bit<2>  ETHPLUS_VERSION = 1;

/* ETH+ packet types (2 bits). */
const bit<2>  PKT_DATA   = 0;
const bit<2>  PKT_ACK    = 1;
const bit<2>  PKT_PROBE  = 2;
const bit<2>  PKT_CREDIT = 3;

/* Path-selection modes, chosen per switch by the controller (lb_config). */
const bit<2>  LB_ECMP     = 0;
const bit<2>  LB_SPRAY    = 1;
const bit<2>  LB_FLOWLET  = 2;
const bit<2>  LB_ADAPTIVE = 3;

/* lb_tuning flags (switch-local adaptivity, off = the modes as above).
 *   LBF_LOCAL_LOAD  a port's load is its last dequeue depth plus the packets
 *                   this switch sent to it since (no stale gap between two
 *                   departures), see port_state.p4;
 *   LBF_DRAIN_GAP   flowlet mode: a flow may change port as soon as its
 *                   previous packet has left this switch (a gap that scales
 *                   with the link rate), not only after flowlet_gap_us;
 *   LBF_RANDOM_TIE  equally loaded candidates are broken by random(), not
 *                   by the flow hash, so simultaneous deciders spread;
 *   LBF_NEAR_BEST   adaptive mode: the probed best hop is used only while
 *                   no live candidate is more than near_slack packets less
 *                   loaded here; otherwise the least-loaded one (HULA
 *                   herding fix: every leaf no longer piles onto one port).
 *   LBF_TRACE       record each data-packet decision in the lb_trace ring. */
const bit<8>  LBF_LOCAL_LOAD = 0x01;
const bit<8>  LBF_DRAIN_GAP  = 0x02;
const bit<8>  LBF_RANDOM_TIE = 0x04;
const bit<8>  LBF_NEAR_BEST  = 0x08;
const bit<8>  LBF_TRACE      = 0x10;

/* RoCEv2 BTH opcodes the switch treats as transport feedback. */
const bit<8>  BTH_RC_ACK = 0x11;
const bit<8>  BTH_CNP    = 0x81;

/* Packet trimming (ethlab's model, see trim.p4): the DSCP a trimmed IPv4
 * packet carries, and the priority trimmed packets and transport feedback
 * (ACK/NAK/CNP) are queued at (v1model standard_metadata.priority). */
const bit<6>  DSCP_TRIMMED  = 0x21;
const bit<3>  PRIO_CONTROL  = 7;

/* Why a packet went to the controller (packet_in.reason). */
const bit<8>  PUNT_ARP = 1;

/* Why ingress dropped a packet: index of MyIngress.drop_reason_counter. */
const bit<8>  DROP_NONE         = 0;
const bit<8>  DROP_NO_ROUTE     = 1;  /* no forwarding entry for the dst   */
const bit<8>  DROP_HOP_EXPIRED  = 2;  /* ETH+ hop_limit or IPv4 TTL ran out */
const bit<8>  DROP_NO_LIVE_PORT = 3;  /* every candidate port is down      */
const bit<8>  DROP_BAD_CHECKSUM = 4;  /* IPv4 header checksum mismatch     */
const bit<8>  DROP_UNHANDLED    = 5;  /* EtherType this program ignores    */
const bit<8>  DROP_PROBE_DONE   = 6;  /* probe consumed (learned, not sent on) */
const bit<32> DROP_REASONS      = 8;

const bit<32> NUM_PORTS        = 512;   /* port numbers are bit<9>        */
const bit<32> NUM_GROUPS       = 1024;
const bit<32> NUM_DESTINATIONS = 1024;  /* adaptive state, per dst_index  */
const bit<32> FLOWLET_SLOTS    = 1024;  /* flowlet state, per flow hash   */
const bit<32> TRACE_SLOTS      = 4096;  /* lb_trace ring of decisions     */

/* -------------------------------------------------------------- types */

typedef bit<9>  port_t;
typedef bit<48> macAddr_t;
typedef bit<32> ip4Addr_t;
typedef bit<19> qdepth_t;      /* width of standard_metadata.deq_qdepth */

/* ------------------------------------------------------------ headers */

/* Controller -> switch. Only present on packets arriving from CPU_PORT. */
@controller_header("packet_out")
header packet_out_t {
    port_t  egress_port;   /* send the frame out of this port as is */
    bit<7>  _pad;
}

/* Switch -> controller. Prepended to every frame sent to CPU_PORT. */
@controller_header("packet_in")
header packet_in_t {
    port_t  ingress_port;  /* where the frame came in */
    bit<8>  reason;        /* PUNT_* */
    bit<7>  _pad;
}

header ethernet_t {
    macAddr_t dstAddr;
    macAddr_t srcAddr;
    bit<16>   etherType;
}

/* ethlab's ETH+ compact header: 12 bytes instead of RoCEv2's 40 bytes of
 * IPv4 + UDP + BTH (+ 4 B ICRC). Fixed layout, no options, so a switch can
 * parse it at line rate and rewrite only the per-hop fields. */
header ethplus_t {
    bit<2>  version;      /* ETHPLUS_VERSION */
    bit<2>  pkt_type;     /* PKT_DATA / PKT_ACK / PKT_PROBE / PKT_CREDIT */
    bit<2>  plane;        /* which of up to 4 parallel fabric planes */
    bit<1>  ect;          /* sender reacts to congestion marks (ECN-capable) */
    bit<1>  ce;           /* congestion experienced, set by any hop */
    bit<4>  hop_limit;    /* remaining hops; dropped when it runs out */
    bit<10> dst_id;       /* destination endpoint id (scale-up routing key) */
    bit<10> src_id;       /* source endpoint id */
    bit<16> entropy;      /* flow/path id chosen by the sender for spraying */
    bit<16> max_qdepth;   /* largest egress queue depth seen on the path (pkts) */
    bit<24> seq;          /* per-flow sequence number (ordering, LLR, acks) */
    bit<1>  trimmed;      /* a switch cut the payload off at a full queue */
    bit<7>  credits;      /* credit packets: credits granted; otherwise 0 */
}

/* Follows the ETH+ header when pkt_type == PKT_PROBE. Probes advertise a
 * path towards dst_index (HULA-style); they are sent by the controller or by
 * host agents, never generated inside a switch. */
header ethplus_probe_t {
    bit<16> dst_index;    /* destination whose reachability is advertised */
    bit<16> path_qdepth;  /* max queue depth towards dst_index so far (pkts) */
    bit<16> probe_seq;    /* sender's round number, for tracing only */
}

header arp_t {
    bit<16>   htype;
    bit<16>   ptype;
    bit<8>    hlen;
    bit<8>    plen;
    bit<16>   oper;
    macAddr_t sha;
    ip4Addr_t spa;
    macAddr_t tha;
    ip4Addr_t tpa;
}

header ipv4_t {
    bit<4>    version;
    bit<4>    ihl;
    bit<6>    dscp;
    bit<2>    ecn;        /* 00 non-ECT, 10 ECT(0), 01 ECT(1), 11 CE */
    bit<16>   totalLen;
    bit<16>   identification;
    bit<3>    flags;
    bit<13>   fragOffset;
    bit<8>    ttl;
    bit<8>    protocol;
    bit<16>   hdrChecksum;
    ip4Addr_t srcAddr;
    ip4Addr_t dstAddr;
}

header udp_t {
    bit<16> srcPort;      /* RoCEv2 senders put flow entropy here */
    bit<16> dstPort;
    bit<16> length;
    bit<16> checksum;
}

/* InfiniBand Base Transport Header as carried by RoCEv2 (12 bytes). */
header bth_t {
    bit<8>  opcode;
    bit<1>  se;           /* solicited event */
    bit<1>  migreq;
    bit<2>  pad_count;
    bit<4>  tver;         /* transport header version */
    bit<16> pkey;
    bit<1>  fecn;
    bit<1>  becn;
    bit<6>  resv6;
    bit<24> dest_qp;
    bit<1>  ack_req;
    bit<7>  resv7;
    bit<24> psn;
}

#ifdef ETHLAB_INC
#include "inc_headers.p4"
#endif

struct headers {
    packet_out_t    packet_out;
    packet_in_t     packet_in;
    ethernet_t      ethernet;
    arp_t           arp;
    ethplus_t       ethplus;
    ethplus_probe_t probe;
    ipv4_t          ipv4;
    udp_t           udp;
    bth_t           bth;
#ifdef ETHLAB_INC
    inc_t           inc;        /* in-network aggregation (ethplus_inc.p4) */
    inc_data_t      inc_data;
#endif
}

/* ----------------------------------------------------------- metadata */

struct metadata {
    /* Set by forwarding: where the packet should go. */
    bit<16> group_id;      /* next-hop group of candidate ports */
    bit<16> dst_index;     /* destination index for adaptive state */
    bit<1>  has_group;
    bit<1>  routed;        /* IPv4 routed: egress rewrites the MACs */
    bit<8>  drop_reason;   /* DROP_* */

    /* Flow key: 5-tuple for IPv4, (src, dst, entropy) for ETH+. */
    bit<32> flow_src;
    bit<32> flow_dst;
    bit<8>  flow_proto;
    bit<16> flow_sport;
    bit<16> flow_dport;
    bit<16> flow_hash;

    /* Controller configuration (lb_config). */
    bit<2>  lb_mode;
    bit<48> flowlet_gap_us;
    bit<48> best_hop_timeout_us;
    bit<16> probe_mgrp;
    bit<8>  lb_flags;      /* LBF_* (lb_tuning) */
    bit<16> near_slack;
    bit<16> drain_margin;  /* packets after a flowlet's last one left */

    /* Candidate ports of the group (nhop_group). */
    bit<4>  n_cand;
    port_t  cand0;
    port_t  cand1;
    port_t  cand2;
    port_t  cand3;
    port_t  cand4;
    port_t  cand5;
    port_t  cand6;
    port_t  cand7;

    /* Output of the ECMP action selector. */
    port_t  ecmp_port;
    bit<1>  ecmp_hit;

    /* Packet trimming (trim_config). */
    bit<1>   trim_on;
    qdepth_t trim_threshold;
    bit<32>  trim_keep_bytes;

    /* Egress ECN thresholds of the packet's egress port (ecn_config). */
    bit<1>   ecn_on;
    qdepth_t ecn_kmin;
    qdepth_t ecn_kmax;
    bit<16>  ecn_pmax;
}

#endif
