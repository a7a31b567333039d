// expect-error: 26:5: conflicting control plane name
// two action declarations may not share a control-plane name (p4c's frontend; p4c-bm2-ss 1.2.4.17 also
// refused this one, later: it cannot write both into the table's BMv2 JSON)
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
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

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    @name("set") action set_a() { hdr.h.a = 1; }
    @name("set") action set_b() { hdr.h.b = 1; }
    table t {
        key = { hdr.h.a: exact; }
        actions = { set_a; set_b; }
    }
    apply { t.apply(); }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
