// t.apply().hit and t.apply().miss in conditions
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
    action nop() { }
    table t1 {
        key = { hdr.h.a : exact; }
        actions = { nop; }
        default_action = nop();
        size = 16;
    }
    table t2 {
        key = { hdr.h.b : exact; }
        actions = { nop; }
        default_action = nop();
        size = 16;
    }
    apply {
        if (t1.apply().hit) {
            hdr.h.c = 8w1;
        } else {
            hdr.h.c = 8w2;
        }
        if (t2.apply().miss) {
            hdr.h.d = 8w3;
        }
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
