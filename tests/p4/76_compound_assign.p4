// compound assignment (P4_16 1.2.4): += -= *= &= |= ^= <<= >>= |+|= |-|= on fields, locals and slices
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  a;
    bit<8>  b;
    bit<8>  c;
    bit<8>  d;
    bit<16> w;
    int<8>  s;
}
struct headers_t { h_t h; }
struct meta_t { bit<8> acc; }

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
    action mix(bit<8> k) {
        hdr.h.a += k;
        hdr.h.b -= k;
        hdr.h.c *= 3;
    }
    apply {
        mix(8w2);
        hdr.h.d |= 8w0x0F;
        hdr.h.d &= 8w0x3C;
        hdr.h.d ^= 8w0x01;
        meta.acc = hdr.h.a;
        meta.acc <<= 2;
        meta.acc >>= 1;
        hdr.h.w[7:0] += meta.acc;
        hdr.h.w |+|= 16w0xFF00;
        hdr.h.s |-|= 8s100;
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
    apply { pkt.emit(hdr.h); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
