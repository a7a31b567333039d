// bit<N>, int<N>, bool, typedef, type, const: values flow through a header.
#include <core.p4>
#include <v1model.p4>

typedef bit<8> byte_t;
type bit<16> tag_t;
const byte_t K = 8w0x11;
const bool FLAG = true;
const bit<9> OUT_PORT = 9w1;

header h_t {
    byte_t  a;
    int<8>  s;
    bit<16> t;
    bit<8>  r1;
    bit<8>  r2;
}

struct headers_t { h_t h; }
struct meta_t { bool big; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        tag_t tg = (tag_t)hdr.h.t;
        meta.big = hdr.h.a > K;
        hdr.h.r1 = meta.big ? 8w1 : 8w0;
        hdr.h.r2 = (bit<8>)(bit<1>)FLAG;
        hdr.h.s = -hdr.h.s;
        if (FLAG && meta.big) {
            hdr.h.t = (bit<16>)tg + 16w1;
        }
        sm.egress_spec = OUT_PORT;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.h); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
