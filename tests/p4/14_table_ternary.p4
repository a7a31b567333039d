// ternary match with wildcard nibbles and priorities (a larger STF priority wins)
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<16> k;
    bit<8>  r;
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
    action mark(bit<8> v) {
        hdr.h.r = v;
        sm.egress_spec = 9w1;
    }
    action miss() {
        hdr.h.r = 8w0xFF;
        sm.egress_spec = 9w2;
    }
    table tern {
        key = { hdr.h.k : ternary; }
        actions = { mark; miss; }
        default_action = miss();
    }
    apply { tern.apply(); }
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
