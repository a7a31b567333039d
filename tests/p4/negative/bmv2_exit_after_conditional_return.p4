// expect-error: 23:9: exit: Conditional execution in actions unsupported on this target
// after an `if` that may return, the rest of an action runs only on some paths: an exit there is as
// conditional for p4c-bm2-ss as one inside the `if`
#include <core.p4>
#include <v1model.p4>

header pkt_t {
    bit<8> op;
    bit<8> val;
}
struct headers_t { pkt_t p; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.p); transition accept; }
}

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action finish(bit<8> op) {
        if (hdr.p.op != op) {
            return;
        }
        exit;
    }
    table ops {
        key = { hdr.p.op: exact; }
        actions = { finish; NoAction; }
    }
    apply { ops.apply(); }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.p); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
