// casts: widen/narrow bit<N>, bit<->int reinterpretation, sign extension, bool<->bit<1>
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  a;
    bit<16> w;
    bit<16> zext;
    bit<16> sext;
    bit<8>  trunc;
    int<16> sw;
    bit<8>  nonzero;
    int<8>  narrowed;
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
        hdr.h.zext = (bit<16>)hdr.h.a;
        hdr.h.sext = (bit<16>)(int<16>)(int<8>)hdr.h.a;
        hdr.h.trunc = (bit<8>)hdr.h.w;
        hdr.h.sw = (int<16>)hdr.h.w;
        bool nz = hdr.h.a != 8w0;
        hdr.h.nonzero = (bit<8>)(bit<1>)nz;
        hdr.h.narrowed = (int<8>)(int<16>)hdr.h.w;
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
