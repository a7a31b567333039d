// clones survive a dropped original (I2E and E2E); mirroring_add_mc clones through a multicast group
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> d;
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
        if (hdr.h.a == 8w1) {
            clone(CloneType.I2E, 32w5);
            mark_to_drop(sm);
        } else if (hdr.h.a == 8w3) {
            clone(CloneType.I2E, 32w8);
            sm.egress_spec = 9w1;
        } else {
            sm.egress_spec = 9w1;
        }
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) {
    apply {
        if (sm.instance_type == 32w0 && hdr.h.a == 8w2) {
            clone(CloneType.E2E, 32w6);
            mark_to_drop(sm);
        }
        hdr.h.c = (bit<8>)sm.egress_port;
        hdr.h.d = (bit<8>)sm.instance_type;
    }
}

control MyCompute(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
