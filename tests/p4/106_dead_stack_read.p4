// A run-time header-stack index read into locals that nothing uses afterwards: p4c-bm2-ss removes the dead
// reads, so an index out of range there touches nothing and BMv2 forwards the packet; p4exec leaves such a
// local's initializer unevaluated too. A local that is used still reads (in range here).
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> i;
    bit<8> n;
}
header e_t { bit<8> v; }
struct headers_t {
    h_t    h;
    e_t[2] s;
}
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        transition accept;
    }
}

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action tag(bit<8> t) {
        bit<8> never = hdr.s[hdr.h.i].v + t;
        hdr.h.n = hdr.h.n | t;
    }
    apply {
        bit<8> unused = hdr.s[hdr.h.i].v;
        bit<8> used = hdr.s[hdr.h.i & 1].v;
        tag(8w0x80);
        hdr.h.n = hdr.h.n + used;
        sm.egress_spec = 1;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.h);
        pkt.emit(hdr.s);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
