// preprocessor: #include of a local file (twice, include-guarded), object-like #define, #ifdef/#ifndef/#else/#endif
#include <core.p4>
#include <v1model.p4>

#include "include/corpus_common.p4"
#include "include/corpus_common.p4"

#define FEATURE_SWAP
#define BUMP 8w3

header eth_t {
    bit<16> type;
}
struct headers_t {
    eth_t  eth;
    pair_t p;
}
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.type) {
            ETHERTYPE_TEST: parse_pair;
            default: accept;
        }
    }
    state parse_pair {
        pkt.extract(hdr.p);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
    #ifdef FEATURE_SWAP
        bit<8> t = hdr.p.a;
        hdr.p.a = hdr.p.b;
        hdr.p.b = t;
    #else
        hdr.p.a = 8w0xEE;
    #endif
    #ifndef FEATURE_MISSING
        hdr.p.a = hdr.p.a + BUMP;
    #endif
    #ifdef FEATURE_MISSING
        hdr.p.b = 8w0xEE;
    #endif
        sm.egress_spec = OUT_PORT;
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
