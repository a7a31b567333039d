// exact match on two fields, action data, setdefault from the control plane
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<16> k1;
    bit<8>  k2;
    bit<32> val;
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
    action set_val(bit<32> v, bit<9> port) {
        hdr.h.val = v;
        sm.egress_spec = port;
    }
    action to_port(bit<9> port) {
        sm.egress_spec = port;
    }
    table t {
        key = {
            hdr.h.k1 : exact;
            hdr.h.k2 : exact;
        }
        actions = { set_val; to_port; }
        default_action = to_port(9w1);
        size = 64;
    }
    apply { t.apply(); }
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
