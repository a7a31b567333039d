// `==`/`!=` of whole objects (field by field, as the Python pipeline's `_eq`): headers (equal when both invalid,
// or both valid with equal fields), a struct-typed field of a header, stacks element by element, unions member
// by member; the header with a struct-typed field is extracted and emitted leaf by leaf in wire order
#include <core.p4>
#include <v1model.p4>

struct pair_t { bit<4> hi; bit<4> lo; }
header sel_t { bit<8> sel; }
header a_t { bit<8> x; pair_t p; }
header_union u_t { a_t a; sel_t s; }
struct headers_t { sel_t sel; a_t a; a_t b; a_t[2] s; a_t[2] t; u_t u; u_t v; }
struct meta_t { pair_t p; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.sel);
        pkt.extract(hdr.a);
        transition select(hdr.sel.sel[0:0]) { 1: get_b; default: accept; }
    }
    state get_b { pkt.extract(hdr.b); transition accept; }
}

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        bit<8> r = 0;
        meta.p = { hi = 1, lo = 2 };
        if (hdr.a == hdr.b) { r = r | 1; }
        if (hdr.a != hdr.b) { r = r | 2; }
        if (hdr.a.p == meta.p) { r = r | 4; }
        hdr.s[0] = hdr.a;
        hdr.t[0] = hdr.b;
        if (hdr.s == hdr.t) { r = r | 8; }
        hdr.u.a = hdr.a;
        hdr.v.a = hdr.b;
        if (hdr.u == hdr.v) { r = r | 16; }
        if (hdr.u != hdr.v) { r = r | 32; }
        hdr.a.p.lo = hdr.a.p.lo + 1;
        hdr.sel.sel = r;
        sm.egress_spec = 2;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.sel); pkt.emit(hdr.a); pkt.emit(hdr.b); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
