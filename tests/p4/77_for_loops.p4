// for loops (P4_16 1.2.5): C-style with several initialisations/updates, range loops, loops over a header
// stack and a list, break and continue
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> n;
    bit<8> sum;
    bit<8> evens;
    bit<8> first_big;
    bit<8> stack_sum;
    bit<8> list_sum;
}
header e_t { bit<8> v; }
struct headers_t { h_t h; e_t[3] s; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        bit<8> total = 0;
        for (bit<8> i = 1, bit<8> j = 0; i <= hdr.h.n; i = i + 1, j += 2) {
            total = total + i + j;
        }
        hdr.h.sum = total;
        bit<8> evens = 0;
        for (bit<8> k in 0 .. 9) {
            if (k[0:0] == 1) {
                continue;
            }
            evens = evens + 1;
        }
        hdr.h.evens = evens;
        hdr.h.first_big = 0;
        for (e_t e in hdr.s) {
            if (e.v > 8w0x40) {
                hdr.h.first_big = e.v;
                break;
            }
        }
        bit<8> ss = 0;
        for (e_t e in hdr.s) {
            ss = ss + e.v;
            e.v = 0;    // a copy: the stack keeps its values
        }
        hdr.h.stack_sum = ss;
        bit<8> ls = 0;
        for (bit<8> x in {8w1, 8w2, 8w4}) {
            ls = ls | x;
        }
        hdr.h.list_sum = ls;
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
    apply { pkt.emit(hdr.h); pkt.emit(hdr.s); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
