// digest() of a named struct from ingress (the packet itself is forwarded unchanged)
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<48> mac;
    bit<16> vlan;
}
struct headers_t { h_t h; }
struct learn_t {
    bit<48> mac;
    bit<9>  port;
}
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
    action learn() {
        digest<learn_t>(1, { hdr.h.mac, sm.ingress_port });
    }
    table seen {
        key = { hdr.h.mac : exact; }
        actions = { learn; NoAction; }
        default_action = learn();
    }
    apply {
        seen.apply();
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
