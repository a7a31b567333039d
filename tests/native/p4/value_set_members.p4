// a parser value_set of two fields (exact and ternary) in a two-key select: members are the control plane's
// (P4Runtime MODIFY); an empty set matches nothing
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<16> type; bit<8> ver; }
header tag_t { bit<8> t; }
struct vs_key_t { @match(exact) bit<16> type; @match(ternary) bit<8> ver; }
struct headers_t { eth_t eth; tag_t tag; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    value_set<vs_key_t>(4) tagged;
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.type, hdr.eth.ver) {
            tagged: parse_tag;
            (16w0x0800, 8w4): accept;
            default: reject;
        }
    }
    state parse_tag { pkt.extract(hdr.tag); transition accept; }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (sm.parser_error != error.NoError) { sm.egress_spec = 9w3; }
        else if (hdr.tag.isValid()) { hdr.tag.t = hdr.tag.t + 8w1; sm.egress_spec = 9w2; }
        else { sm.egress_spec = 9w1; }
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.eth); pkt.emit(hdr.tag); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
