// Struct- and tuple-valued constants: declared with named fields, with a positional list, nested, at top level
// and inside a control; used whole (assigned, compared, passed to an action), field by field, and as a tuple
// item. Each use is a fresh value: writing the copy in a local leaves the constant as it was.
#include <core.p4>
#include <v1model.p4>

struct pair_t { bit<8> lo; bit<16> hi; }
struct outer_t { pair_t inner; bool on; bit<4> tag; }

const pair_t BASE = { lo = 3, hi = 0x1234 };
const pair_t ALT = { 5, 0x0006 };
const outer_t NESTED = { inner = { lo = 7, hi = 8 }, on = true, tag = 0xA };
const tuple<bit<8>, bit<16>> TUP = { 0x21, 0x4321 };

header h_t {
    bit<8>  sel;
    bit<8>  lo;
    bit<16> hi;
    bit<8>  res;
}
struct headers_t { h_t h; }
struct meta_t { pair_t m; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    const pair_t LOCAL = { lo = 1, hi = 2 };

    action put(in pair_t p) {
        hdr.h.lo = p.lo;
        hdr.h.hi = p.hi;
    }
    apply {
        sm.egress_spec = 1;
        meta.m = BASE;
        if (hdr.h.sel == BASE.lo) {
            meta.m = ALT;
            put(NESTED.inner);
        } else if (hdr.h.sel == TUP[0]) {
            hdr.h.hi = TUP[1];
        } else if (hdr.h.sel == 9) {
            pair_t copy = LOCAL;
            copy.lo = 0xEE;
            hdr.h.lo = LOCAL.lo;
            put(copy);
            hdr.h.lo = hdr.h.lo + LOCAL.lo;
        }
        if (NESTED.on) {
            hdr.h.res = meta.m.lo + (bit<8>) NESTED.tag;
        }
        if (meta.m == ALT) {
            sm.egress_spec = 2;
        }
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
