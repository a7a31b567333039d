// Values wider than 64 bits in C (u128): wrap-around of +, -, *, unary minus and ~ at 96 and 128 bits, shifts by
// constants and run-time amounts (>= the width gives 0), slices across the 64-bit boundary (read and assigned),
// concatenation into a wide value, comparisons with constants above 2^64, a P4 function with a wide value,
// a parser select on a wide key, and a table with a wide ternary key and wide action data.
#include <core.p4>
#include <v1model.p4>

header w_t {
    bit<128> a;
    bit<128> b;
    bit<96>  c;
    bit<8>   sh;
    bit<8>   flags;
    bit<128> sum;
    bit<128> diff;
    bit<128> prod;
    bit<128> shl;
    bit<128> shr;
    bit<128> mix;
    bit<96>  c1;
    bit<96>  cneg;
    bit<64>  sl;
    bit<128> cat;
    bit<128> tdata;
    bit<96>  tdata2;
    bit<16>  low;
}
struct headers_t { w_t w; }
struct meta_t { bit<128> m; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.w);
        transition select(hdr.w.b) {
            128w0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF: reject;
            128w0x00000000000000010000000000000000 &&& 128w0x0000000000000001FFFFFFFFFFFFFFFF: marked;
            default: accept;
        }
    }
    state marked {
        meta.m = 128w0x80000000000000000000000000000001;
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

bit<128> twice(in bit<128> x) { return x + x; }

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set_data(bit<128> d, bit<96> e, bit<9> port) {
        hdr.w.tdata = d;
        hdr.w.tdata2 = e;
        sm.egress_spec = port;
    }
    table wt {
        key = { hdr.w.b : ternary; hdr.w.sh : exact; }
        actions = { set_data; NoAction; }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 9w1;
        hdr.w.sum = hdr.w.a + hdr.w.b;
        hdr.w.diff = twice(hdr.w.a - hdr.w.b);
        hdr.w.prod = hdr.w.a * hdr.w.b;
        hdr.w.shl = hdr.w.a << hdr.w.sh;
        hdr.w.shr = hdr.w.a >> hdr.w.sh;
        hdr.w.mix = ((hdr.w.a << 70) | (hdr.w.b >> 100)) ^ ~hdr.w.b;
        hdr.w.c1 = hdr.w.c + 96w1;
        hdr.w.cneg = -hdr.w.c;
        hdr.w.sl = hdr.w.a[99:36];
        hdr.w.cat = hdr.w.c ++ hdr.w.a[31:0];
        hdr.w.mix[127:120] = hdr.w.sh;
        hdr.w.mix[71:8] = hdr.w.b[63:0];
        hdr.w.low = (bit<16>)hdr.w.prod;
        bit<8> f = 0;
        if (hdr.w.a < hdr.w.b) { f = f | 8w1; }
        if (hdr.w.a == hdr.w.b) { f = f | 8w2; }
        if (hdr.w.a > (bit<128>)hdr.w.c) { f = f | 8w4; }
        if (hdr.w.sum >= 128w0x10000000000000000) { f = f | 8w8; }
        if (meta.m != 0) { f = f | 8w16; }
        hdr.w.flags = f;
        wt.apply();
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
