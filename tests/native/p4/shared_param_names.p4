// two controls name a parameter alike with different types (`hdr` is the headers in ingress, the metadata in
// egress, and `meta` the other way round): each action and table reaches its own control's objects
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> k; bit<8> v; bit<8> w; }
struct headers_t { h_t h; }
struct meta_t { bit<8> seen; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set(bit<8> v, bit<9> port) { hdr.h.v = v; meta.seen = hdr.h.k; sm.egress_spec = port; }
    action to_port(bit<9> port) { meta.seen = 8w1; sm.egress_spec = port; }
    table t {
        key = { hdr.h.k : exact; }
        actions = { set; to_port; }
        default_action = to_port(9w1);
    }
    apply { t.apply(); }
}

control MyEgress(inout headers_t meta, inout meta_t hdr, inout standard_metadata_t sm) {
    action mark(bit<8> m) { meta.h.w = meta.h.w | m | hdr.seen; }
    table e {
        key = { meta.h.v : exact; }
        actions = { mark; NoAction; }
        default_action = NoAction();
    }
    apply { e.apply(); }
}

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
