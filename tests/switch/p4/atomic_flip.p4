/* atomic_flip.p4 -- the switch tests' atomicity probe: where a frame goes and what it carries are
 * decided by two tables, so a packet that sees half of a control-plane batch is visible.
 *   MyIngress.route   keyless: default set_port(port) chooses the egress port
 *   MyIngress.mark    keyless: default set_dst(mac) rewrites the destination MAC
 *   MyIngress.filler  entries that never match (ballast between the two flips of a batch)
 */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

struct headers { ethernet_t ethernet; }
struct metadata { }

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action set_port(bit<9> port) { standard_metadata.egress_spec = port; }
    action set_dst(bit<48> mac) { hdr.ethernet.dstAddr = mac; }
    action drop() { mark_to_drop(standard_metadata); }
    table route {
        actions = { set_port; drop; }
        default_action = drop();
    }
    table mark {
        actions = { set_dst; }
        default_action = set_dst(0);
    }
    table filler {
        key = { hdr.ethernet.srcAddr: exact; }
        actions = { set_dst; }
        size = 1024;
    }
    apply {
        route.apply();
        mark.apply();
        if (hdr.ethernet.etherType == 0xffff) { filler.apply(); }
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) { apply { } }

control MyComputeChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyDeparser(packet_out packet, in headers hdr) {
    apply { packet.emit(hdr.ethernet); }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
