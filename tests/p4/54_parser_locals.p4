// parser-local variables carried across states and copied into metadata
#include <core.p4>
#include <v1model.p4>

header pair_t {
    bit<8> a;
    bit<8> b;
}
struct headers_t {
    pair_t first;
    pair_t second;
}
struct meta_t { bit<8> count; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    bit<8> n;
    state start {
        n = 8w0x10;
        pkt.extract(hdr.first);
        n = n + 8w1;
        transition select(hdr.first.a) {
            8w1: more;
            default: done;
        }
    }
    state more {
        pkt.extract(hdr.second);
        n = n + 8w1;
        transition done;
    }
    state done {
        meta.count = n;
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        hdr.first.b = meta.count;
        sm.egress_spec = 9w1;
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
    apply {
        pkt.emit(hdr.first);
        pkt.emit(hdr.second);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
