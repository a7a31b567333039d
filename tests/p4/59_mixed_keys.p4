// tables with mixed match kinds: exact + lpm (longest prefix within the exact match) and exact + ternary with priorities
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  vrf;
    bit<32> addr;
    bit<8>  r1;
    bit<8>  r2;
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
    action set1(bit<8> v) { hdr.h.r1 = v; }
    action set2(bit<8> v) { hdr.h.r2 = v; }
    table routes {
        key = {
            hdr.h.vrf  : exact;
            hdr.h.addr : lpm;
        }
        actions = { set1; NoAction; }
        default_action = NoAction();
    }
    table acl {
        key = {
            hdr.h.vrf  : exact;
            hdr.h.addr : ternary;
        }
        actions = { set2; NoAction; }
        default_action = NoAction();
    }
    apply {
        routes.apply();
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
