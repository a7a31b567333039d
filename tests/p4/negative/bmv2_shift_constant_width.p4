// expect-error: 27:30: limits a shift amount to 8 bits
// p4c-bm2-ss 1.2.4.17 refuses a shift amount whose type is wider than 8 bits even when it is a constant (16w4),
// unless both operands are constants and the shift folds away (measured; backends/bmv2/common/lower.cpp)
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
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

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    bit<16> unused = 0;
    apply {
        hdr.h.b = (bit<8>)(8w3 << 16w2);
        hdr.h.a = hdr.h.a << 16w4;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
