// a stack of header unions: the parser fills the next union by a tag (the other member made invalid), ingress
// reads member and union validity at a run-time index, setValid on a member invalidates its sibling, pop_front
// shifts whole unions; a field named like a C keyword (`short`)
#include <core.p4>
#include <v1model.p4>

header tag_t { bit<8> kind; }
header a_t { bit<8> short; }
header b_t { bit<16> long; }
header_union ab_t { a_t a; b_t b; }
header cnt_t { bit<8> n; bit<8> i; }
struct headers_t { cnt_t c; tag_t[3] tags; ab_t[3] u; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.c); transition next; }
    state next {
        pkt.extract(hdr.tags.next);
        transition select(hdr.tags.last.kind) {
            8w1: get_a;
            8w2: get_b;
            default: accept;
        }
    }
    state get_a { pkt.extract(hdr.u.next.a); transition next; }
    state get_b { pkt.extract(hdr.u.next.b); transition next; }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 9w2;
        hdr.c.n = 0;
        if (hdr.u[0].isValid()) { hdr.c.n = hdr.c.n + 1; }
        if (hdr.u[1].isValid()) { hdr.c.n = hdr.c.n + 2; }
        if (hdr.c.i < 3) {
            if (hdr.u[hdr.c.i].a.isValid()) {
                hdr.u[hdr.c.i].a.short = hdr.u[hdr.c.i].a.short + 1;
            } else if (hdr.u[hdr.c.i].b.isValid()) {
                hdr.u[hdr.c.i].a.setValid();
                hdr.u[hdr.c.i].a.short = hdr.u[hdr.c.i].b.long[7:0];
            }
        }
        if (hdr.c.n == 3) { hdr.u.pop_front(1); }
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.c); pkt.emit(hdr.u); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
