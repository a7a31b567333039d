// expect-error: 29:28: lists two actions with the control-plane name 'MyIngress.set'
// two actions may share a control-plane name (@name; p4c lists it once in P4Info), but not in one table:
// p4c-bm2-ss cannot write both into the table's BMv2 JSON
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
