// mark_to_drop in ingress and egress, egress_spec = 511 drops, a later assignment undoes a drop
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
    apply {
        sm.egress_spec = 9w1;
        if (hdr.h.a == 8w1) {
            mark_to_drop(sm);
        } else if (hdr.h.a == 8w2) {
            sm.egress_spec = 9w511;
        } else if (hdr.h.a == 8w3) {
            mark_to_drop(sm);
            sm.egress_spec = 9w2;
        }
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) {
    apply {
        if (hdr.h.a == 8w4) {
            mark_to_drop(sm);
        }
        hdr.h.d = (bit<8>)sm.egress_port;
    }
}

control MyCompute(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
