// the ?: operator (nested) and if/else-if chains
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> max;
    bit<8> sign;
    bit<8> bucket;
}
struct headers_t { h_t h; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        hdr.h.max = hdr.h.a > hdr.h.b ? hdr.h.a : hdr.h.b;
        hdr.h.sign = (int<8>)hdr.h.a < 0 ? 8w0xFF : ((int<8>)hdr.h.a == 0 ? 8w0 : 8w1);
        if (hdr.h.a < 8w10) {
            hdr.h.bucket = 8w1;
        } else if (hdr.h.a < 8w100) {
            hdr.h.bucket = 8w2;
        } else {
            hdr.h.bucket = 8w3;
        }
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
    apply { pkt.emit(hdr); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
