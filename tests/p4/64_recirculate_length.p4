// a header added in egress is part of the recirculated packet; packet_length follows the new size
#include <core.p4>
#include <v1model.p4>

header tag_t { bit<8> t; }
header h_t {
    bit<8>  a;
    bit<8>  passes;
    bit<16> len;
}
struct headers_t {
    tag_t tag;
    h_t   h;
}
struct meta_t {
    @field_list(1)
    bit<8> passes;
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        transition select(pkt.lookahead<bit<8>>()) {
            8w0xEE: tagged;
            default: untagged;
        }
    }
    state tagged {
        pkt.extract(hdr.tag);
        transition untagged;
    }
    state untagged {
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
        hdr.h.passes = meta.passes;
        hdr.h.len = (bit<16>)sm.packet_length;
        sm.egress_spec = 9w2;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) {
    apply {
        if (!hdr.tag.isValid()) {
            hdr.tag.setValid();
            hdr.tag.t = 8w0xEE;
            meta.passes = meta.passes + 8w1;
            recirculate_preserving_field_list(8w1);
        }
    }
}

control MyCompute(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.tag);
        pkt.emit(hdr.h);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
