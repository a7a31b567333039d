// A serializable enum where its underlying bit type is expected: select labels, a comparison, an initializer,
// exact and masked const-entry keys, a shift amount (P4_16 converts it implicitly; p4c agrees)
#include <core.p4>
#include <v1model.p4>

enum bit<16> kind_t { IPV4 = 0x0800, IPV6 = 0x86dd, ARP = 0x0806 }
enum bit<8> amount_t { ONE = 1, FOUR = 4 }

header h_t {
    bit<16> kind;
    bit<8>  a;
    bit<8>  b;
}
struct headers_t { h_t h; }
struct meta_t { bit<8> seen; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.kind) {
            kind_t.IPV4: known;
            kind_t.IPV6: known;
            default: accept;
        }
    }
    state known { meta.seen = 1; transition accept; }
}

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action to(bit<9> port) { sm.egress_spec = port; }
    table by_kind {
        key = { hdr.h.kind: ternary; }
        actions = { to; NoAction; }
        const entries = {
            kind_t.IPV4 : to(2);
            kind_t.ARP &&& 0xFF00 : to(3);
        }
        default_action = to(1);
    }
    apply {
        bit<16> v6 = kind_t.IPV6;
        if (hdr.h.kind == v6) {
            hdr.h.a = hdr.h.a << amount_t.FOUR;
        } else if (kind_t.IPV4 == hdr.h.kind) {
            hdr.h.a = hdr.h.a << amount_t.ONE;
        }
        hdr.h.b = meta.seen;
        by_kind.apply();
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
