// comparisons on unsigned and signed values, logical operators, ++ concatenation
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  a;
    bit<8>  b;
    bit<8>  flags;
    bit<16> cat;
    bit<24> cat3;
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
        bit<1> lt = (bit<1>)(hdr.h.a < hdr.h.b);
        bit<1> le = (bit<1>)(hdr.h.a <= hdr.h.b);
        bit<1> gt = (bit<1>)(hdr.h.a > hdr.h.b);
        bit<1> ge = (bit<1>)(hdr.h.a >= hdr.h.b);
        bit<1> eq = (bit<1>)(hdr.h.a == hdr.h.b);
        bit<1> ne = (bit<1>)(hdr.h.a != hdr.h.b);
        bit<1> slt = (bit<1>)((int<8>)hdr.h.a < (int<8>)hdr.h.b);
        bit<1> lg = (bit<1>)(!(hdr.h.a == 8w0) && (hdr.h.b == 8w0 || hdr.h.b == 8w1));
        hdr.h.flags = lt ++ le ++ gt ++ ge ++ eq ++ ne ++ slt ++ lg;
        hdr.h.cat = hdr.h.a ++ hdr.h.b;
        hdr.h.cat3 = hdr.h.b[3:0] ++ hdr.h.a ++ 12w0xABC;
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
