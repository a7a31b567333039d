// an egress table keyed on egress_port with 48- and 128-bit action data; 9-bit metadata arithmetic wraps
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<48>  mac;
    bit<128> tag;
    bit<16>  wrapped;
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
    apply {
        // 9-bit arithmetic: port + 511 wraps to port - 1
        hdr.h.wrapped = (bit<16>)(sm.ingress_port + 9w511);
        sm.egress_spec = 9w2;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) {
    action rewrite(bit<48> mac, bit<128> tag) {
        hdr.h.mac = mac;
        hdr.h.tag = tag;
    }
    table port_rewrite {
        key = { sm.egress_port : exact @name("out_port"); }
        actions = { rewrite; NoAction; }
        default_action = NoAction();
    }
    apply {
        port_rewrite.apply();
    }
}

control MyCompute(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
