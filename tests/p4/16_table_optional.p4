// optional match kind: an exact value or a don't-care (_) per field
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> proto;
    bit<8> flags;
    bit<8> r;
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
    action set_r(bit<8> v) { hdr.h.r = v; }
    table acl {
        key = {
            hdr.h.proto : optional;
            hdr.h.flags : optional;
        }
        actions = { set_r; NoAction; }
        const entries = {
            (8w6, 8w2)  : set_r(8w1);
            (8w6, _)    : set_r(8w2);
            (_, 8w0x80) : set_r(8w3);
        }
        default_action = NoAction();
    }
    apply {
        acl.apply();
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
