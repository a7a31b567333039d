// saturating |+| and |-| on bit<N> and int<N>
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    int<8> x;
    int<8> y;
    bit<8> usat_add;
    bit<8> usat_sub;
    int<8> ssat_add;
    int<8> ssat_sub;
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
        hdr.h.usat_add = hdr.h.a |+| hdr.h.b;
        hdr.h.usat_sub = hdr.h.a |-| hdr.h.b;
        hdr.h.ssat_add = hdr.h.x |+| hdr.h.y;
        hdr.h.ssat_sub = hdr.h.x |-| hdr.h.y;
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
