// a control instance without tables may be applied more than once (p4c inlines each call); the same for an
// action-only sub-control reached twice through direct type calls
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
}
struct headers_t { h_t h; }
struct meta_t { }

control AddOne(inout bit<8> x) {
    action inc() { x = x + 1; }
    apply { inc(); }
}

control Swap(inout bit<8> x, inout bit<8> y) {
    apply {
        bit<8> t = x;
        x = y;
        y = t;
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
    AddOne() add;
    apply {
        add.apply(hdr.h.a);
        add.apply(hdr.h.a);
        add.apply(hdr.h.b);
        Swap.apply(hdr.h.a, hdr.h.c);
        Swap.apply(hdr.h.a, hdr.h.b);
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
