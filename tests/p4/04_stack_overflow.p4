// header stack overflow in the parser sets parser_error = StackOutOfBounds
#include <core.p4>
#include <v1model.p4>

header tag_t {
    bit<7> val;
    bit<1> bos;
}
header res_t { bit<8> code; }
struct headers_t {
    res_t     res;
    tag_t[2]  tags;
}
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.tags.next);
        transition select(hdr.tags.last.bos) {
            1w1: accept;
            default: start;
        }
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        hdr.res.setValid();
        if (sm.parser_error == error.StackOutOfBounds) {
            hdr.res.code = 8w0xB0;
        } else if (sm.parser_error == error.NoError) {
            hdr.res.code = 8w0x00;
        } else {
            hdr.res.code = 8w0xFF;
        }
        sm.egress_spec = 9w3;
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
        pkt.emit(hdr.tags);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
