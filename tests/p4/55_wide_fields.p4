// 128-bit fields: LPM on an IPv6-sized key and wrap-around arithmetic beyond 64 bits
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<128> addr;
    bit<128> x;
    bit<128> sum;
    bit<64>  hi;
    bit<8>   tag;
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
    table lpm6 {
        key = { hdr.h.addr : lpm; }
        actions = { route; NoAction; }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 9w3;
        hdr.h.sum = hdr.h.addr + hdr.h.x;
        hdr.h.hi = hdr.h.addr[127:64];
        lpm6.apply();
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
