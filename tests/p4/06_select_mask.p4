// select with ternary masks (&&&) and multiple keys, first match wins
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> r;
}
struct headers_t { h_t h; }
struct meta_t { bit<8> which; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.a, hdr.h.b) {
            (8w0x10 &&& 8w0xF0, 8w0x01): s1;
            (8w0x10 &&& 8w0xF0, _): s2;
            (_, 8w0x80 &&& 8w0x80): s3;
            default: s4;
        }
    }
    state s1 { meta.which = 1; transition accept; }
    state s2 { meta.which = 2; transition accept; }
    state s3 { meta.which = 3; transition accept; }
    state s4 { meta.which = 4; transition accept; }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        hdr.h.r = meta.which;
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
