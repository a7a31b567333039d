// expect-error: 32:13: overflow in priority computation
// an entry without a priority follows the previous one by priority_delta; below 0 is an error (p4c)
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
}

struct headers_t { h_t h; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    action s(bit<8> v) { hdr.h.b = v; }
    table t {
        key = { hdr.h.a: ternary; }
        actions = { s; }
        priority_delta = 10;
        entries = {
            priority = 12: 8w1 &&& 8w0xFF : s(1);
            8w2 &&& 8w0xFF : s(2);
            8w3 &&& 8w0xFF : s(3);
        }
    }
    apply {
        t.apply();
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
