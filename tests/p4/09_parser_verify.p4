// verify() with a standard error, multi-state parsing with default transitions
#include <core.p4>
#include <v1model.p4>

header eth_t {
    bit<48> dst;
    bit<48> src;
    bit<16> type;
}
header ver_t {
    bit<4> version;
    bit<4> len;
}
struct headers_t {
    eth_t eth;
    ver_t ver;
}
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.type) {
            16w0x88B5: parse_ver;
            default: accept;
        }
    }
    state parse_ver {
        pkt.extract(hdr.ver);
        verify(hdr.ver.version == 4w4, error.HeaderTooShort);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        if (sm.parser_error != error.NoError) {
            hdr.eth.dst = 48w0xBADBADBADBAD;
        }
        sm.egress_spec = 9w2;
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
