// expect-error: 27:13: table MyIngress.classify has multiple successors
// a table applied in both branches of an `if` is fine for p4c-bm2-ss only if both places continue the same
// way (BMv2 gives a table one set of successors); here one branch goes on with an assignment
#include <core.p4>
#include <v1model.p4>

header pkt_t {
    bit<8> kind;
    bit<8> mark;
}
struct headers_t { pkt_t p; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.p); transition accept; }
}

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    table classify {
        key = { hdr.p.kind: exact; }
        actions = { NoAction; }
    }
    apply {
        if (hdr.p.mark == 8w0) {
            classify.apply();
        } else {
            classify.apply();
            hdr.p.mark = 8w0;
        }
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.p); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
