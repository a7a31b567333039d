// entries with explicit priorities mixed with entries without one: an entry without a priority follows the
// previous one by priority_delta (downwards, as the largest priority wins by default). Not `const entries`: p4c
// rejects priorities there. Entries are listed in priority order, because p4c-bm2-ss 1.2.4.17 hands BMv2 the
// entries in program order and BMv2 matches them in that order.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> r1;
    bit<8> r2;
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
    action s1(bit<8> v) { hdr.h.r1 = v; }
    action s2(bit<8> v) { hdr.h.r2 = v; }
    table t1 {
        key = { hdr.h.a: ternary; }
        actions = { s1; }
        entries = {
            priority = 30: 8w0x22 &&& 8w0xFF : s1(3);    // 30
                           8w0x20 &&& 8w0xF0 : s1(4);    // 29
            priority = 20: 8w0x10 &&& 8w0xF0 : s1(1);    // 20
                           8w0x11 &&& 8w0xFF : s1(2);    // 19: loses against 20
        }
    }
    table t2 {
        key = { hdr.h.a: ternary; }
        actions = { s2; }
        priority_delta = 10;
        entries = {
            priority = 5: 8w0x00 &&& 8w0x00 : s2(5);     // 5
                           8w0x33 &&& 8w0xFF : s2(6);    // 5 + 10 = 15 (smallest wins here)
        }
        largest_priority_wins = false;
    }
    apply {
        t1.apply();
        t2.apply();
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
    apply { pkt.emit(hdr.h); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
