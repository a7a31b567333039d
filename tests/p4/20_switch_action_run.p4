// switch (t.apply().action_run) with grouped labels and default
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> d;
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
    action a1() { }
    action a2() { }
    action a3() { }
    action a4() { }
    table t {
        key = { hdr.h.a : exact; }
        actions = { a1; a2; a3; a4; }
        default_action = a4();
    }
    apply {
        switch (t.apply().action_run) {
            a1: { hdr.h.b = 8w0x01; }
            a2:
            a3: { hdr.h.b = 8w0x23; }
            default: { hdr.h.b = 8w0xDE; }
        }
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
    apply { pkt.emit(hdr); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
