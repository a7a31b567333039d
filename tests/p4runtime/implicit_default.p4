/* implicit_default.p4 -- a table (fwd) whose default action is the implicit NoAction, not in its
 * action list and so not in its P4Info action_refs (another table makes NoAction a P4Info action),
 * plus an indexed counter: what an all-or-nothing batch must be able to roll back. */
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
    counter(8, CounterType.packets) hits;
    action set_port(bit<9> port) { standard_metadata.egress_spec = port; }
    action drop() { mark_to_drop(standard_metadata); }
    table fwd {
        key = { hdr.ethernet.dstAddr: exact; }
        actions = { set_port; drop; }
        size = 16;
    }
    table other {
        key = { hdr.ethernet.etherType: exact; }
        actions = { NoAction; drop; }
        size = 4;
    }
    apply {
        standard_metadata.egress_spec = 3;
        other.apply();
        fwd.apply();
        hits.count(0);
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) { apply { } }

control MyComputeChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyDeparser(packet_out packet, in headers hdr) {
    apply { packet.emit(hdr.ethernet); }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
