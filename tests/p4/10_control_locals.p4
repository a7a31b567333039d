// controls with local constants, variables, actions, tables and a sub-control instance
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> d;
}
struct headers_t { h_t h; }
struct meta_t { }

control AddK(inout bit<8> x, in bit<8> k) {
    bit<8> tmp = 8w0;
    apply {
        tmp = x + k;
        x = tmp;
    }
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
    const bit<8> LOCAL_K = 8w3;
    bit<8> acc = 8w0x10;
    AddK() add_a;
    AddK() add_b;
    action bump() { acc = acc + LOCAL_K; }
    apply {
        bump();
        bump();
        hdr.h.c = acc;
        add_a.apply(hdr.h.a, LOCAL_K);
        add_b.apply(hdr.h.b, hdr.h.a);
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
