// lookahead of a struct and of a header in a select and an assignment: the next bits, nothing consumed, and
// PacketTooShort when the packet ends first
#include <core.p4>
#include <v1model.p4>

struct peek_t { bit<4> kind; bit<4> len; bit<8> tag; }
header tag_t { bit<8> kind_len; bit<8> tag; }
header out_t { bit<8> kind; bit<8> tag; }
struct headers_t { tag_t t; out_t o; }
struct meta_t { bit<8> seen; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        peek_t p = pkt.lookahead<peek_t>();
        meta.seen = p.tag;
        transition select(p.kind) {
            4w1: one;
            default: two;
        }
    }
    state one {
        hdr.o = pkt.lookahead<out_t>();
        pkt.extract(hdr.t);
        transition accept;
    }
    state two {
        pkt.extract(hdr.t);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = sm.parser_error == error.NoError ? 9w2 : 9w3;
        if (hdr.o.isValid()) { hdr.o.tag = hdr.o.tag + meta.seen; }
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.o); pkt.emit(hdr.t); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
