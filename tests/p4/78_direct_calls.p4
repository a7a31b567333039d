// calling a parser/control type directly (`C.apply(...)`, an implicit instance), sub-parsers with scalar
// out/inout parameters, named arguments in the package instantiation
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> kind;
    bit<8> x;
    bit<8> y;
    bit<8> z;
}
header opt_t {
    bit<8> len;
}
struct headers_t { h_t h; opt_t opt; }
struct meta_t { bit<8> seen; bit<8> opt_len; }

parser ReadOpt(packet_in pkt, out opt_t o, out bit<8> len, inout bit<8> count) {
    state start {
        pkt.extract(o);
        len = o.len;
        count = count + 1;
        transition select(o.len) {
            8w0xFF: reject;
            default: accept;
        }
    }
}

parser Skip(packet_in pkt, inout bit<8> count) {
    state start {
        count = count + 8w0x10;
        transition accept;
    }
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    ReadOpt() read_opt;
    state start {
        pkt.extract(hdr.h);
        meta.seen = 0;
        transition select(hdr.h.kind) {
            8w1: opt;
            default: skip;
        }
    }
    state opt {
        read_opt.apply(pkt, hdr.opt, meta.opt_len, meta.seen);
        transition accept;
    }
    state skip {
        Skip.apply(pkt, meta.seen);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control Double(inout bit<8> v) {
    apply { v = v + v; }
}

control AddTo(inout bit<8> acc, in bit<8> v) {
    apply { acc = acc + v; }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        Double.apply(hdr.h.x);
        Double.apply(hdr.h.y);
        AddTo.apply(hdr.h.z, meta.seen);
        AddTo.apply(hdr.h.z, meta.opt_len);
        sm.egress_spec = 9w1;
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
    apply { pkt.emit(hdr.h); pkt.emit(hdr.opt); }
}

V1Switch(vr = MyVerify(), p = MyParser(), ig = MyIngress(), eg = MyEgress(), ck = MyCompute(),
         dep = MyDeparser()) main;
