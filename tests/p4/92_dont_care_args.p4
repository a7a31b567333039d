// `_` (don't care) as an argument where p4c accepts it: for an out parameter of a function, an action or an
// extern (random's T then comes from its bounds), and for an action's parameter of any direction (an inout's copy-out is dropped)
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> c; }
struct headers_t { h_t h; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

bit<8> twice(in bit<8> x, out bit<8> also) {
    also = x;
    return x + x;
}

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    register<bit<8>>(4) r;
    action fill(out bit<8> x) { x = 8w0x11; hdr.h.c = hdr.h.c + 1; }
    action touch(inout bit<8> x) { x = 8w0x22; hdr.h.c = hdr.h.c + 2; }
    action send(bit<9> port, bit<8> tag) { sm.egress_spec = port; hdr.h.b = hdr.h.b | tag; }
    apply {
        hdr.h.a = twice(hdr.h.a, _);
        fill(_);
        touch(_);
        send(9w3, _);
        r.write(32w1, hdr.h.a);
        r.read(_, 32w1);
        random(_, 8w1, 8w9);
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
