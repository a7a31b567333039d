// const default_action with arguments and a default that the control plane may replace
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
    action set_c(bit<8> v) { hdr.h.c = v; }
    action set_d(bit<8> v) { hdr.h.d = v; }
    table fixed {
        key = { hdr.h.a : exact; }
        actions = { set_c; }
        const default_action = set_c(8w0xC0);
    }
    table soft {
        key = { hdr.h.b : exact; }
        actions = { set_d; NoAction; }
        default_action = NoAction();
    }
    apply {
        fixed.apply();
        soft.apply();
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
