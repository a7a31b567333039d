// nested structs in metadata and in the headers struct, nested {...} initialisers, emit of a whole struct
#include <core.p4>
#include <v1model.p4>

header eth_h {
    bit<16> type;
}
header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
}
struct l2_t {
    eth_h eth;
}
struct headers_t {
    l2_t l2;
    h_t  h;
}
struct inner_t {
    bit<8> x;
    bit<8> y;
}
struct outer_t {
    inner_t i;
    bit<8>  z;
}
struct meta_t { outer_t o; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.l2.eth);
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
        meta.o = { { hdr.h.a, 8w2 }, 8w3 };
        outer_t copy = meta.o;
        copy.i.x = copy.i.x + copy.z;
        hdr.h.a = copy.i.x;
        hdr.h.b = meta.o.i.y;
        hdr.h.c = meta.o.z;
        hdr.l2.eth.type = hdr.l2.eth.type + 16w1;
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
    apply {
        pkt.emit(hdr);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
