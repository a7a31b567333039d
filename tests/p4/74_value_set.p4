// a parser value_set: members are installed by the control plane; an empty set matches nothing
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<16> type; }
header tag_t { bit<8> t; }
struct headers_t {
    eth_t eth;
    tag_t tag;
}
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    value_set<bit<16>>(4) tunnel_types;
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.type) {
            tunnel_types: parse_tag;
            default: accept;
        }
    }
    state parse_tag {
        pkt.extract(hdr.tag);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        if (hdr.tag.isValid()) {
            hdr.tag.t = hdr.tag.t + 8w1;
            sm.egress_spec = 9w2;
        } else {
            sm.egress_spec = 9w1;
        }
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) {
    apply { }
}

control MyCompute(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
