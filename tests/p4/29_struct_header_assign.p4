// header/struct assignment, {...} initialisers (list and named), isValid/setValid/setInvalid
#include <core.p4>
#include <v1model.p4>

header pair_t {
    bit<8> x;
    bit<8> y;
}
header flag_t { bit<8> f; }
struct two_t {
    bit<8> p;
    bit<8> q;
}
struct headers_t {
    flag_t flag;
    pair_t first;
    pair_t second;
    pair_t third;
}
struct meta_t { two_t t; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.flag);
        pkt.extract(hdr.first);
        transition select(hdr.flag.f) {
            8w1: two;
            default: accept;
        }
    }
    state two {
        pkt.extract(hdr.second);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        meta.t = { hdr.first.y, hdr.first.x };
        two_t copy = meta.t;
        if (!hdr.second.isValid()) {
            // no second header: build one from the struct
            hdr.second.setValid();
            hdr.second = { copy.p, copy.q };
        } else {
            // copy a whole header, then drop the original
            hdr.third = hdr.second;
            hdr.second.setInvalid();
            hdr.third.y = 8w0x33;
        }
        if (hdr.flag.f == 8w2) {
            hdr.first = { x = 8w0xAA, y = 8w0xBB };
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
        pkt.emit(hdr.flag);
        pkt.emit(hdr.first);
        pkt.emit(hdr.second);
        pkt.emit(hdr.third);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
