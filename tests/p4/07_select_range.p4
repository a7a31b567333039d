// select with ranges (lo..hi) and a set of values
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<16> v;
    bit<8>  r;
}
struct headers_t { h_t h; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.v) {
            16w0 .. 16w99: low;
            16w100 .. 16w999: mid;
            16w0xFFFF: top;
            _: high;
        }
    }
    state low  { hdr.h.r = 8w1; transition accept; }
    state mid  { hdr.h.r = 8w2; transition accept; }
    state top  { hdr.h.r = 8w4; transition accept; }
    state high { hdr.h.r = 8w3; transition accept; }
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
    apply { }
}

control MyCompute(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
