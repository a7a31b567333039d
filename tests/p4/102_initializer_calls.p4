// Control-local initializers with side effects, run on every packet in declaration order before the apply
// block: a call with an inout argument, a plain read after it (it sees the updated field), a table applied
// for its hit flag; and a table whose action list binds an argument computed by a call with an inout argument
// (evaluated each time the action runs).
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> d;
}
struct headers_t { h_t h; }
struct meta_t { bit<8> unused; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

// increments its argument and returns the new value plus 0x10
bit<8> bump(inout bit<8> v) {
    v = v + 1;
    return v + 0x10;
}

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    bit<8> first = bump(hdr.h.a);
    bit<8> seen_a = hdr.h.a;

    action set_c(bit<8> v) { hdr.h.c = v; }
    table by_b {
        key = { hdr.h.b: exact; }
        actions = { set_c; }
        default_action = set_c(0x77);
    }
    bool hit = by_b.apply().hit;

    action put(in bit<8> v) { hdr.h.d = v; }
    table bumped {
        actions = { put(bump(hdr.h.b)); }
        default_action = put(bump(hdr.h.b));
    }

    apply {
        hdr.h.b = first;
        hdr.h.c = hdr.h.c + seen_a;
        sm.egress_spec = hit ? 9w2 : 9w1;
        bumped.apply();
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
