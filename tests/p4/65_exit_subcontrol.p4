// exit inside an applied sub-control ends the calling control too; return only leaves the sub-control; exit in egress
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

control Inner(inout h_t h) {
    apply {
        h.b = 8w0xB0;
        if (h.a == 8w1) {
            return;
        }
        if (h.a == 8w2) {
            exit;
        }
        h.b = 8w0xB1;
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
    Inner() inner;
    apply {
        sm.egress_spec = 9w1;
        inner.apply(hdr.h);
        hdr.h.c = 8w0xCC;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) {
    apply {
        if (hdr.h.a == 8w3) {
            exit;
        }
        hdr.h.d = 8w0xDD;
    }
}

control MyCompute(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
