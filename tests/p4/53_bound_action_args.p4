// actions listed with bound directional arguments (out param fixed per table, data from the entry)
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
    action set_field(out bit<8> f, bit<8> v) {
        f = v;
    }
    table tb {
        key = { hdr.h.a : exact; }
        actions = { set_field(hdr.h.b); }
        default_action = set_field(hdr.h.b, 8w0xEE);
    }
    table tc {
        key = { hdr.h.a : exact; }
        actions = { set_field(hdr.h.c); }
        default_action = set_field(hdr.h.c, 8w0xCC);
    }
    apply {
        tb.apply();
        tc.apply();
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
