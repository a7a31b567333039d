// bit slices [h:l] as r-values and l-values
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<16> a;
    bit<8>  hi;
    bit<8>  lo;
    bit<4>  mid;
    bit<4>  pad;
    bit<16> b;
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
        hdr.h.hi = hdr.h.a[15:8];
        hdr.h.lo = hdr.h.a[7:0];
        hdr.h.mid = hdr.h.a[9:6];
        hdr.h.b[3:0] = 4w0xF;
        hdr.h.b[15:12] = hdr.h.a[3:0];
        hdr.h.b[8:8] = 1w0;
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
