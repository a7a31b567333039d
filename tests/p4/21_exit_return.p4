// return leaves the current control or action, exit ends the whole control (ingress)
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
    // exit inside an action, unconditionally (p4c-bm2-ss rejects a conditional exit in an action); the
    // action itself is called conditionally from the apply block
    action mark_and_exit() {
        hdr.h.c = 8w0xE0;
        exit;
    }
    apply {
        sm.egress_spec = 9w1;
        if (hdr.h.a == 8w1) {
            hdr.h.b = 8w0xAA;
            return;
        }
        if (hdr.h.a == 8w2) {
            mark_and_exit();
        }
        hdr.h.c = 8w0xE1;
        hdr.h.d = 8w0xDD;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) {
    apply {
        // egress still runs after an exit in ingress
        hdr.h.a = hdr.h.a + 8w0x10;
    }
}

control MyCompute(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
