// a table whose action list binds an out and an inout argument (the entry gives the rest), applied in a
// switch on action_run: the bound action's case is chosen by its name like any other
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
struct headers_t { h_t h; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set_pair(out bit<8> f, inout bit<8> g, bit<8> v, bit<4> w) { f = v; g = g + v + (bit<8>) w; }
    action other() { hdr.h.b = 0xEE; }
    table t {
        key = { hdr.h.a : exact; }
        actions = { set_pair(hdr.h.b, hdr.h.c); other; }
        default_action = other();
    }
    apply {
        sm.egress_spec = 1;
        switch (t.apply().action_run) {
            set_pair: { hdr.h.d = 1; }
            other: { hdr.h.d = 2; }
        }
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
