// clone_preserving_field_list(E2E): the clone is taken from the end of egress (with its changes) and runs egress again as instance_type 2
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> d;
}
struct headers_t { h_t h; }
struct meta_t { @field_list(1) bit<8> tag; }

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
    apply { sm.egress_spec = 9w1; }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) {
    apply {
        if (sm.instance_type == 32w0) {
            hdr.h.c = 8w0x0C;
            if (hdr.h.a == 8w1) {
                meta.tag = 8w0xE2;
                clone_preserving_field_list(CloneType.E2E, 32w7, 8w1);
            }
            hdr.h.b = 8w0x0B;
        } else if (sm.instance_type == 32w2) {
            hdr.h.d = meta.tag;         // preserved by field list 1
        }
    }
}

control MyCompute(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
