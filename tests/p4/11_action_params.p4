// actions with directional (in/inout/out) parameters called directly and directionless ones from the table
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
    action swap(inout bit<8> x, inout bit<8> y) {
        bit<8> t = x;
        x = y;
        y = t;
    }
    action sum_into(out bit<8> r, in bit<8> p, in bit<8> q) {
        r = p + q;
    }
    action set_d_port(bit<8> dval, bit<9> port) {
        hdr.h.d = dval;
        sm.egress_spec = port;
    }
    action mixed(inout bit<8> x, bit<8> delta) {
        x = x + delta;
    }
    table t {
        key = { hdr.h.a : exact; }
        actions = { set_d_port; NoAction; }
        default_action = set_d_port(8w0xDD, 9w7);
    }
    apply {
        swap(hdr.h.a, hdr.h.b);
        sum_into(hdr.h.c, hdr.h.a, hdr.h.b);
        mixed(hdr.h.c, 8w1);
        t.apply();
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
