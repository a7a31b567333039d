// expect-error: 18:5: conflicting control plane name
// two action declarations with one control-plane name, in two controls (p4c since 2024; 1.2.4.17 merged them)
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<16> c; }
struct headers_t { h_t h; }
struct meta_t { bit<8> m; bit<16> w; }
parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    @name(".drop_it") action drop_it() { mark_to_drop(sm); }
    table t { key = { hdr.h.a: exact; } actions = { drop_it; NoAction; } }
    apply { t.apply(); }
}
control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    @name(".drop_it") action drop_it() { mark_to_drop(sm); }
    table t2 { key = { hdr.h.a: exact; } actions = { drop_it; NoAction; } }
    apply { t2.apply(); }
}
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
