// P4Info names as p4c-bm2-ss 1.2.4.17 writes them (checked with it): an action called only from another action
// is inlined and not listed (helper), @name on a V1Switch block's declaration is ignored (MyIngress, not
// TopIngress), a non-ASCII @name is written once in UTF-8 (tablé)
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; }
struct meta_t { }
parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
@name("Renamed") control Sub(inout headers_t hdr) {
    action s(bit<8> v) { hdr.h.b = v; }
    table t { key = { hdr.h.a: exact; } actions = { s; NoAction; } }
    apply { t.apply(); }
}
@name("TopIngress") control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    Sub() sub;
    @name("señal") action senal(bit<8> v) { hdr.h.b = v; }
    @name("tablé") table tble { key = { hdr.h.a: exact; } actions = { senal; NoAction; } }
    action helper(bit<8> v) { hdr.h.a = v; }
    action caller() { helper(8w3); }
    apply { sub.apply(hdr); tble.apply(); caller(); }
}
control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
