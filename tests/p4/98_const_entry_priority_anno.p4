// `@priority(N)` after a const entry: p4c warns that it is ignored, yet p4c-bm2-ss writes N as the entry's
// BMv2 priority (the others get their position, 1 first) and BMv2 prefers the smallest: p4exec follows BMv2
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
}
struct headers_t { h_t h; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set(bit<8> v) { hdr.h.b = v; }
    table t {
        key = { hdr.h.a: ternary; }
        actions = { set; NoAction; }
        const entries = {
            8w0x01 &&& 8w0x0F : set(8w1) @priority(3);
            8w0x11 &&& 8w0xFF : set(8w2) @priority(1);
            8w0x20 &&& 8w0xF0 : set(8w3);
        }
    }
    apply { sm.egress_spec = 1; t.apply(); }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
