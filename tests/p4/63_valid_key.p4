// header validity (isValid()) as an exact table key next to a ternary field
#include <core.p4>
#include <v1model.p4>

header a_t { bit<8> kind; }
header b_t { bit<8> v; }
header r_t { bit<8> res; }
struct headers_t {
    a_t a;
    b_t b;
    r_t r;
}
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.a);
        transition select(hdr.a.kind) {
            8w1: with_b;
            default: accept;
        }
    }
    state with_b {
        pkt.extract(hdr.b);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    action set_res(bit<8> v) {
        hdr.r.setValid();
        hdr.r.res = v;
    }
    table by_validity {
        key = {
            hdr.b.isValid() : exact @name("b_valid");
            hdr.a.kind      : ternary;
        }
        actions = { set_res; NoAction; }
        default_action = NoAction();
    }
    apply {
        by_validity.apply();
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
    apply {
        pkt.emit(hdr.a);
        pkt.emit(hdr.b);
        pkt.emit(hdr.r);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
