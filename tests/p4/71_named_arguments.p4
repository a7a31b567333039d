// calls with named arguments in any order (actions, externs, sub-controls)
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  a;
    bit<8>  b;
    bit<16> h;
}
struct headers_t { h_t h; }
struct meta_t { }

control Scale(inout bit<8> x, in bit<8> by) {
    apply { x = x * by; }
}

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
    Scale() scale;
    action set_both(bit<8> first, bit<8> second) {
        hdr.h.a = first;
        hdr.h.b = second;
    }
    apply {
        set_both(second = hdr.h.a, first = hdr.h.b);
        scale.apply(by = 8w2, x = hdr.h.a);
        hash(result = hdr.h.h, algo = HashAlgorithm.identity, base = 16w0, data = { hdr.h.a, hdr.h.b }, max = 32w65536);
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
