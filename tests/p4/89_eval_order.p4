// evaluation order: in `a[i] = f(...)` the target's index is evaluated before the call changes i, and
// `a[g()] = a[g()]` calls g twice, left to right (P4_16: left-to-right evaluation)
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> i; bit<8> n; }
header e_t { bit<8> v; }
struct headers_t { h_t h; e_t[4] s; }
struct meta_t { bit<8> k; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); pkt.extract(hdr.s[0]); pkt.extract(hdr.s[1]); pkt.extract(hdr.s[2]); pkt.extract(hdr.s[3]); transition accept; }
}
control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
bit<8> bump(inout bit<8> x) { x = x + 1; return 8w0x40; }
bit<8> next_index(inout bit<8> x) { x = x + 1; return x; }
control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.s[hdr.h.i].v = bump(hdr.h.i);
        hdr.s[next_index(hdr.h.n)].v = hdr.s[next_index(hdr.h.n)].v | 8w0x80;
        sm.egress_spec = 9w1;
    }
}
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); pkt.emit(hdr.s); } }
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
