// shifts by constants and by run-time amounts (>= width gives 0), & | ^ ~, arithmetic shift right on int
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<16> a;
    bit<16> b;
    bit<8>  n;
    int<8>  s;
    bit<16> shl;
    bit<16> shr;
    bit<16> shlc;
    bit<16> band;
    bit<16> bor;
    bit<16> bxor;
    bit<16> bnot;
    int<8>  sshr;
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
        hdr.h.shl = hdr.h.a << hdr.h.n;
        hdr.h.shr = hdr.h.a >> hdr.h.n;
        hdr.h.shlc = hdr.h.b << 4;
        hdr.h.band = hdr.h.a & hdr.h.b;
        hdr.h.bor = hdr.h.a | hdr.h.b;
        hdr.h.bxor = hdr.h.a ^ hdr.h.b;
        hdr.h.bnot = ~hdr.h.a;
        hdr.h.sshr = hdr.h.s >> 2;
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
