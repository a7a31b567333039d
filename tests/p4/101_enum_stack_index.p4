// A serializable enum as a header-stack index: a member (a constant index), a local of the enum type and a
// header field cast to it (an index known at run time), read and written, in the control and in the parser
#include <core.p4>
#include <v1model.p4>

enum bit<2> slot_t { FIRST = 0, SECOND = 1, THIRD = 2, LAST = 3 }

header sel_t {
    bit<2> pick;
    bit<6> pad;
}
header h_t { bit<8> v; }
struct headers_t {
    sel_t   sel;
    h_t[4]  hs;
}
struct meta_t { bit<8> first_seen; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.sel);
        pkt.extract(hdr.hs.next);
        pkt.extract(hdr.hs.next);
        pkt.extract(hdr.hs.next);
        pkt.extract(hdr.hs.next);
        meta.first_seen = hdr.hs[slot_t.FIRST].v;
        transition accept;
    }
}

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        slot_t s = (slot_t) hdr.sel.pick;
        bit<8> picked = hdr.hs[s].v;
        hdr.hs[slot_t.SECOND].v = hdr.hs[slot_t.LAST].v + meta.first_seen;
        hdr.hs[s].v = picked + 0x10;
        if (s == slot_t.THIRD) {
            sm.egress_spec = 2;
        }
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.sel); pkt.emit(hdr.hs); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
