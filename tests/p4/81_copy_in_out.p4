// calls with out/inout arguments inside expressions (left to right, copy-out when the call returns), copy-out
// on exit, and copy-out winning over a write to the same global inside the callee
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> d;
}
header r_t {
    bit<8> left_first;
    bit<8> call_first;
    bit<8> local;
    bit<8> after;
}
struct headers_t { h_t h; r_t r; }
struct meta_t { bit<8> v; }

bit<8> bump(inout bit<8> x) {
    x = x + 1;
    return x + x;
}

bit<8> split(in bit<8> v, out bit<8> hi, out bit<8> lo) {
    hi = v >> 4;
    lo = v & 8w0x0F;
    return hi + lo;
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        pkt.extract(hdr.r);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    action set_and_exit(inout bit<8> x) {
        x = 8w0x77;
        exit;
    }
    action global_then_param(inout h_t h) {
        hdr.h.c = 8w0x55;        // a write to the global that is also the argument...
        h.c = h.c + 1;           // ...the copy-out of h wins
        hdr.h.d = h.c;
    }
    apply {
        sm.egress_spec = 9w1;
        hdr.r.left_first = hdr.h.a + bump(hdr.h.a);     // a read before the call's copy-out
        hdr.r.call_first = bump(hdr.h.b) + hdr.h.b;     // b read after it
        meta.v = 8w0x3C;
        hdr.r.local = split(meta.v, hdr.h.c, meta.v) + meta.v;
        global_then_param(hdr.h);
        if (hdr.h.a == 8w2) {
            set_and_exit(hdr.r.after);
        }
        hdr.r.after = 8w0xEE;
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
    apply { pkt.emit(hdr.h); pkt.emit(hdr.r); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
