// lpm match: the longest matching prefix wins, /0 as catch-all
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<32> addr;
    bit<8>  tag;
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
    action route(bit<9> port, bit<8> tag) {
        sm.egress_spec = port;
        hdr.h.tag = tag;
    }
    action drop() { mark_to_drop(sm); }
    table lpm {
        key = { hdr.h.addr : lpm; }
        actions = { route; drop; }
        default_action = drop();
    }
    apply { lpm.apply(); }
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
