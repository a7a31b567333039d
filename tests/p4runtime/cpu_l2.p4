/* cpu_l2.p4 -- test program for the P4Runtime server: packet-in/out through the CPU
 * port, an exact L2 table with a direct counter, multicast, a port counter, a register
 * and a learning digest. */
#include <core.p4>
#include <v1model.p4>

const bit<9> CPU_PORT = 255;

@controller_header("packet_out")
header packet_out_t {
    bit<9> egress_port;
    bit<7> _pad;
}

@controller_header("packet_in")
header packet_in_t {
    bit<9> ingress_port;
    bit<7> _pad;
}

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

struct headers {
    packet_out_t packet_out;
    packet_in_t  packet_in;
    ethernet_t   ethernet;
}

struct learn_t {
    bit<48> srcAddr;
    bit<9>  port;
}

struct metadata {
    learn_t learn;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        transition select(standard_metadata.ingress_port) {
            CPU_PORT: parse_packet_out;
            default: parse_ethernet;
        }
    }
    state parse_packet_out {
        packet.extract(hdr.packet_out);
        transition parse_ethernet;
    }
    state parse_ethernet {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    counter(8, CounterType.packets_and_bytes) port_counter;
    register<bit<32>>(16) seen;
    direct_counter(CounterType.packets_and_bytes) l2_counter;

    action drop() { mark_to_drop(standard_metadata); }
    action set_port(bit<9> port) { standard_metadata.egress_spec = port; }
    action flood(bit<16> grp) { standard_metadata.mcast_grp = grp; }
    action to_cpu() {
        standard_metadata.egress_spec = CPU_PORT;
        hdr.packet_in.setValid();
        hdr.packet_in.ingress_port = standard_metadata.ingress_port;
        hdr.packet_in._pad = 0;
    }
    action learn() {
        meta.learn.srcAddr = hdr.ethernet.srcAddr;
        meta.learn.port = standard_metadata.ingress_port;
        digest<learn_t>(1, meta.learn);
        standard_metadata.egress_spec = 1;
    }

    direct_counter(CounterType.packets_and_bytes) arp_counter;
    table arp_guard {
        key = { hdr.ethernet.etherType: exact; }
        actions = { NoAction; drop; }
        const entries = { 0x0806 : drop(); }
        counters = arp_counter;
    }

    table l2 {
        key = { hdr.ethernet.dstAddr: exact; }
        actions = { set_port; flood; to_cpu; learn; drop; }
        default_action = drop();
        counters = l2_counter;
        size = 64;
    }

    apply {
        if (hdr.packet_out.isValid()) {
            standard_metadata.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
        } else {
            port_counter.count((bit<32>) standard_metadata.ingress_port);
            bit<32> n;
            seen.read(n, (bit<32>) standard_metadata.ingress_port);
            seen.write((bit<32>) standard_metadata.ingress_port, n + 1);
            l2.apply();
            arp_guard.apply();
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) { apply { } }

control MyComputeChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.packet_in);
        packet.emit(hdr.ethernet);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
