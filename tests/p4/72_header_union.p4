// header_union: extracting one member makes it the valid one; isValid on the union and on members
#include <core.p4>
#include <v1model.p4>

header v4_t {
    bit<4>  version;
    bit<4>  rest;
    bit<8>  x;
}
header v6_t {
    bit<4>  version;
    bit<12> rest;
    bit<8>  y;
}
header_union ip_t {
    v4_t v4;
    v6_t v6;
}
header res_t { bit<8> which; }
struct headers_t {
    res_t res;
    ip_t  ip;
}
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        transition select(pkt.lookahead<bit<4>>()) {
            4w4: v4;
            4w6: v6;
            default: accept;
        }
    }
    state v4 {
        pkt.extract(hdr.ip.v4);
        transition accept;
    }
    state v6 {
        pkt.extract(hdr.ip.v6);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        hdr.res.setValid();
        if (!hdr.ip.isValid()) {
            hdr.res.which = 8w0;
        } else if (hdr.ip.v4.isValid()) {
            hdr.res.which = 8w4;
        } else {
            hdr.res.which = 8w6;
            bit<8> y = hdr.ip.v6.y;
            // making the other member valid invalidates this one
            hdr.ip.v4.setValid();
            hdr.ip.v4.version = 4w4;
            hdr.ip.v4.rest = 4w0;
            hdr.ip.v4.x = y;
        }
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
    apply {
        pkt.emit(hdr.res);
        pkt.emit(hdr.ip);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
