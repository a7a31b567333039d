// BMv2 end-of-ingress rules: mark_to_drop clears mcast_grp, multicast wins over a drop, egress_spec defaults to port 0, metadata starts at 0
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
    bit<8> never_written;
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
        if (hdr.h.a == 8w1) {
            sm.mcast_grp = 16w1;
            mark_to_drop(sm);
        } else if (hdr.h.a == 8w2) {
            mark_to_drop(sm);
            sm.mcast_grp = 16w1;
        } else if (hdr.h.a == 8w4) {
            hdr.h.b = meta.never_written;
            sm.egress_spec = 9w1;
        }
        // a == 3: egress_spec is never written
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) {
    apply {
        hdr.h.c = (bit<8>)sm.egress_port;
    }
}

control MyCompute(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
