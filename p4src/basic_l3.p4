/* basic_l3.p4 -- ethlab's first-day example: plain IPv4 routing on v1model.
 *
 * One LPM table picks the next hop (its MAC and the egress port); the switch
 * rewrites the Ethernet addresses, decrements the TTL and fixes the checksum.
 * Everything else (non-IPv4, expired TTL, bad checksum, no route) is dropped.
 * A per-port counter counts what arrives on each ingress port.
 *
 * Names used by other parts of ethlab (controller, benchmarks):
 *   MyIngress.ipv4_lpm, MyIngress.ipv4_forward, MyIngress.drop,
 *   MyIngress.port_counter (packets/bytes received per ingress port).
 */
#include <core.p4>
#include <v1model.p4>

const bit<16> ETHERTYPE_IPV4 = 0x0800;

typedef bit<9>  egressSpec_t;
typedef bit<48> macAddr_t;
typedef bit<32> ip4Addr_t;

header ethernet_t {
    macAddr_t dstAddr;
    macAddr_t srcAddr;
    bit<16>   etherType;
}

header ipv4_t {
    bit<4>    version;
    bit<4>    ihl;
    bit<6>    dscp;
    bit<2>    ecn;
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

struct metadata {
    /* nothing yet: a place for users to add their own fields */
}

struct headers {
    ethernet_t ethernet;
    ipv4_t     ipv4;
}

/* ---------------------------------------------------------------- parser */

parser MyParser(packet_in packet,
                out headers hdr,
                inout metadata meta,
                inout standard_metadata_t standard_metadata) {

    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }

    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition accept;
    }
}

/* ------------------------------------------------------ checksum verify */

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply {
        /* A mismatch sets standard_metadata.checksum_error; ingress drops it. */
        verify_checksum(
            hdr.ipv4.isValid() && hdr.ipv4.ihl == 5,
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn,
              hdr.ipv4.totalLen, hdr.ipv4.identification,
              hdr.ipv4.flags, hdr.ipv4.fragOffset,
              hdr.ipv4.ttl, hdr.ipv4.protocol,
              hdr.ipv4.srcAddr, hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum,
            HashAlgorithm.csum16);
    }
}

/* --------------------------------------------------------------- ingress */

control MyIngress(inout headers hdr,
                  inout metadata meta,
                  inout standard_metadata_t standard_metadata) {

    /* Every arriving packet is counted, including the ones dropped below,
     * so offered load per port can be read from the control plane. */
    counter(512, CounterType.packets_and_bytes) port_counter;

    action drop() {
        mark_to_drop(standard_metadata);
    }

    /* Route to the next hop: its MAC becomes the destination, the old
     * destination (this router's MAC) becomes the source. */
    action ipv4_forward(macAddr_t dstAddr, egressSpec_t port) {
        standard_metadata.egress_spec = port;
        hdr.ethernet.srcAddr = hdr.ethernet.dstAddr;
        hdr.ethernet.dstAddr = dstAddr;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }

    table ipv4_lpm {
        key = {
            hdr.ipv4.dstAddr: lpm;
        }
        actions = {
            ipv4_forward;
            drop;
            NoAction;
        }
        size = 1024;
        default_action = drop();
    }

    apply {
        port_counter.count((bit<32>)standard_metadata.ingress_port);
        if (!hdr.ipv4.isValid() || standard_metadata.checksum_error == 1) {
            drop();
        } else if (hdr.ipv4.ttl <= 1) {
            /* A TTL of 1 would leave as 0: expire it here. */
            drop();
        } else {
            ipv4_lpm.apply();
        }
    }
}

/* ---------------------------------------------------------------- egress */

control MyEgress(inout headers hdr,
                 inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply { }
}

/* ---------------------------------------------------- checksum compute */

control MyComputeChecksum(inout headers hdr, inout metadata meta) {
    apply {
        update_checksum(
            hdr.ipv4.isValid() && hdr.ipv4.ihl == 5,
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn,
              hdr.ipv4.totalLen, hdr.ipv4.identification,
              hdr.ipv4.flags, hdr.ipv4.fragOffset,
              hdr.ipv4.ttl, hdr.ipv4.protocol,
              hdr.ipv4.srcAddr, hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum,
            HashAlgorithm.csum16);
    }
}

/* -------------------------------------------------------------- deparser */

control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
    }
}

V1Switch(
    MyParser(),
    MyVerifyChecksum(),
    MyIngress(),
    MyEgress(),
    MyComputeChecksum(),
    MyDeparser()
) main;
