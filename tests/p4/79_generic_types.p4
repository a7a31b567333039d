// generic structs and headers (P4_16 1.2.2), struct-typed fields inside a header, lookahead of a struct and
// of a header
#include <core.p4>
#include <v1model.p4>

struct pair_t<T> {
    T first;
    T second;
}
header wrap_t<T> {
    T value;
}
struct nibbles_t {
    bit<4> hi;
    bit<4> lo;
}
header h_t {
    nibbles_t n;
    bit<8>    tag;
}
header peek_t {
    bit<8> a;
    bit<8> b;
}
struct headers_t {
    h_t              h;
    wrap_t<bit<16>>  w;
    wrap_t<bit<8>>   extra;
}
struct meta_t {
    pair_t<bit<8>>  p8;
    pair_t<bit<16>> p16;
    bit<8>          peeked;
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        nibbles_t ahead = pkt.lookahead<nibbles_t>();
        peek_t two = pkt.lookahead<peek_t>();
        meta.peeked = two.b;
        pkt.extract(hdr.h);
        transition select(ahead.hi) {
            4w0xA: wide;
            default: accept;
        }
    }
    state wide {
        pkt.extract(hdr.w);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        meta.p8 = { hdr.h.n.lo ++ hdr.h.n.hi, meta.peeked };
        hdr.h.n.hi = meta.p8.first[7:4];   // swapped nibbles
        hdr.h.n.lo = meta.p8.first[3:0];
        meta.p16.first = hdr.w.value;
        meta.p16.second = meta.p16.first + 1;
        if (hdr.w.isValid()) {
            hdr.w.value = meta.p16.second;
        }
        hdr.extra.setValid();
        hdr.extra.value = meta.p8.second;
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
