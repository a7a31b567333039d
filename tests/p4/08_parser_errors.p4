// parser errors PacketTooShort and NoMatch, visible in standard_metadata.parser_error
#include <core.p4>
#include <v1model.p4>

header a_t { bit<8> t; }
header b_t { bit<32> x; }
header res_t { bit<8> code; }
struct headers_t {
    res_t res;
    a_t   a;
    b_t   b;
}
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.a);
        transition select(hdr.a.t) {
            8w1: parse_b;
            8w2: accept;
        }
    }
    state parse_b {
        pkt.extract(hdr.b);
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
        if (sm.parser_error == error.PacketTooShort) {
            hdr.res.code = 8w1;
        } else if (sm.parser_error == error.NoMatch) {
            hdr.res.code = 8w2;
        } else if (sm.parser_error == error.NoError) {
            hdr.res.code = 8w0;
        } else {
            hdr.res.code = 8w0xFF;
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
        pkt.emit(hdr.a);
        pkt.emit(hdr.b);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
