// expect-error: 24:28: Table with 'const' entries cannot have priorities
// p4c v1.2.4.17 allows explicit entry priorities only in `entries`, never in `const entries`
#include <core.p4>
#include <v1model.p4>

header tag_t {
    bit<8> kind;
    bit<8> res;
}
struct headers_t { tag_t tag; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.tag); transition accept; }
}

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action mark(bit<8> v) { hdr.tag.res = v; }
    table by_kind {
        key = { hdr.tag.kind: ternary; }
        actions = { mark; }
        const entries = {
            8w0x0F &&& 8w0x0F : mark(8w1);
            priority = 7 : 8w0xF0 &&& 8w0xF0 : mark(8w2);
        }
    }
    apply { by_kind.apply(); }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.tag); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
