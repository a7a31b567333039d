// table keys that are slices and 9-bit metadata (with @name), lookahead of a whole header, egress_spec written in egress is ignored
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<32> addr;
    bit<8>  kind;
    bit<8>  r;
}
struct headers_t { h_t h; }
struct meta_t { bit<8> peek_kind; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        h_t peeked = pkt.lookahead<h_t>();
        meta.peek_kind = peeked.kind;
        pkt.extract(hdr.h);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    action set_r(bit<8> v) {
        hdr.h.r = hdr.h.r + v;
    }
    table by_top {
        key = { hdr.h.addr[31:24] : exact @name("top"); }
        actions = { set_r; NoAction; }
        default_action = NoAction();
    }
    table by_port {
        key = { sm.ingress_port : exact @name("in_port"); }
        actions = { set_r; NoAction; }
        default_action = NoAction();
    }
    apply {
        by_top.apply();
        by_port.apply();
        hdr.h.kind = meta.peek_kind + 8w1;
        sm.egress_spec = 9w1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) {
    apply {
        // only a drop (511) is acted upon at the end of egress; other values are ignored
        sm.egress_spec = 9w7;
    }
}

control MyCompute(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
