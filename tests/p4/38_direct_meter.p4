// direct_meter attached with meters = ...; read() in the hit action (unconfigured = green)
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  a;
    bit<8>  colour;
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
    direct_meter<bit<8>>(MeterType.packets) dm;
    action police() {
        dm.read(hdr.h.colour);
        sm.egress_spec = 9w1;
    }
    action other() {
        hdr.h.colour = 8w0xEE;
        sm.egress_spec = 9w2;
    }
    table t {
        key = { hdr.h.a : exact; }
        actions = { police; other; }
        default_action = other();
        meters = dm;
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
