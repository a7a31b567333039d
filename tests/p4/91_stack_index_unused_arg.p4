// an out-of-range run-time header-stack index in an argument whose parameter the action never uses: p4c-bm2-ss
// drops that copy-in (and the inout copy-out), so BMv2 forwards the packet, the rest of the action done; an
// index in range works as usual. (A used out-of-range access aborts BMv2: a counted drop in p4exec.)
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> i; bit<8> n; }
header e_t { bit<8> v; }
struct headers_t { h_t h; e_t[2] s; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action mark(inout bit<8> ignored, bit<8> tag) { hdr.h.n = hdr.h.n | tag; }
    action keep(in bit<8> ignored) { sm.egress_spec = 9w1; }
    action note(bit<8> ignored, bit<9> port) { sm.egress_spec = port; }
    action add_one(inout bit<8> x) { x = x + 1; }
    apply {
        mark(hdr.s[hdr.h.i].v, 8w0x01);
        keep(hdr.s[hdr.h.i + 8w1].v);
        if (hdr.h.i == 8w0) {
            add_one(hdr.s[hdr.h.i].v);
        } else {
            note(hdr.s[hdr.h.i ^ 8w0x0f].v, 9w2);
        }
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.h);
        pkt.emit(hdr.s);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
