// expect-error: 21:9: Conditional execution in actions unsupported on this target
// p4c-bm2-ss predicates an `if` inside an action into conditional assignments; an extern call (here one
// reached through another action) or an exit that runs only on some paths has no such form
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
    register<bit<8>>(8) last;
    action remember() {
        last.write(32w0, hdr.p.val);
    }
    action handle(bit<8> op) {
        hdr.p.val = hdr.p.val + 8w1;
        if (hdr.p.op == op) {
            remember();
        }
    }
    table ops {
        key = { hdr.p.op: exact; }
        actions = { handle; NoAction; }
    }
    apply { ops.apply(); }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.p); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
