// random(): lo == hi is exact, other results stay inside [lo, hi]
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  fixed;
    bit<8>  inrange;
    bit<16> any;
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
        bit<8> r;
        random(hdr.h.fixed, 8w7, 8w7);
        random(r, 8w10, 8w20);
        hdr.h.inrange = (r >= 8w10 && r <= 8w20) ? 8w1 : 8w0;
        random(hdr.h.any, 16w0, 16w0xFFFF);
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
