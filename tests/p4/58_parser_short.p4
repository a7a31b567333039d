// lookahead and advance past the end of the packet raise PacketTooShort without consuming
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
}
header res_t { bit<8> code; }
struct headers_t {
    res_t res;
    h_t   h;
}
struct meta_t { bit<32> v; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.a) {
            8w1: peek;
            8w2: skip;
            default: accept;
        }
    }
    state peek {
        meta.v = pkt.lookahead<bit<32>>();
        transition accept;
    }
    state skip {
        pkt.advance(32);
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
        hdr.res.code = sm.parser_error == error.PacketTooShort ? 8w1 : 8w0;
        if (hdr.h.a == 8w1 && hdr.res.code == 8w0) {
            hdr.h.b = meta.v[7:0];
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
        pkt.emit(hdr.h);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
