// resubmit_preserving_field_list: ingress runs again on the original packet with preserved metadata, instance_type 6
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> d;
}
struct headers_t { h_t h; }
struct meta_t {
    @field_list(0)
    bit<8> note;
    bit<8> scratch;
}

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
        if (sm.instance_type == 32w0) {
            meta.note = 8w0x42;
            meta.scratch = 8w0x99;
            hdr.h.b = 8w0xEE;
            resubmit_preserving_field_list(8w0);
        } else {
            hdr.h.c = meta.note;
            hdr.h.d = (bit<8>)sm.instance_type | meta.scratch;
        }
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
