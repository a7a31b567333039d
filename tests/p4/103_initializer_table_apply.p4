// Control-local initializers run in declaration order on every packet: a table applied for its hit flag
// between two reads of the field its action writes (the first sees the old value, the second the new one).
// No P4 functions here, so the native pipeline runs it too.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
struct headers_t { h_t h; }
struct meta_t { bit<8> unused; }
parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    bit<8> before = hdr.h.c;
    action set_c(bit<8> v) { hdr.h.c = v; }
    table by_b { key = { hdr.h.b: exact; } actions = { set_c; } default_action = set_c(0x77); }
    bool hit = by_b.apply().hit;
    bit<8> after = hdr.h.c;
    apply {
        hdr.h.a = before + (8w0 << (bit<16>) hdr.h.b);   // a shift of 0: p4c removes it, so no 8-bit limit
        hdr.h.d = after;
        sm.egress_spec = hit ? 9w2 : 9w1;
    }
}
control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
