// clone(I2E): the clone carries the packet as received (re-parsed), instance_type 1, session port from mirroring_add
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
        sm.egress_spec = 9w1;
        if (hdr.h.a == 8w1) {
            clone(CloneType.I2E, 32w5);
        } else if (hdr.h.a == 8w2) {
            // session 6 is never configured: no clone
            clone(CloneType.I2E, 32w6);
        }
        // ingress changes are not seen by the clone
        hdr.h.b = 8w0xBB;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) {
    apply {
        if (sm.instance_type == 32w1) {
            hdr.h.c = 8w0xC1;
        } else {
            hdr.h.c = 8w0xC0;
        }
        hdr.h.d = (bit<8>)sm.egress_port;
    }
}

control MyCompute(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
