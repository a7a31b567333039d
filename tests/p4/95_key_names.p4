// Key names as p4c writes them without @name on the key: a struct field's own @name (".x" drops the path),
// constants in the base they were written in without width (16w0x0F0F -> 0xf0f), slices, `&`, isValid()
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  a;
    bit<8>  b;
    bit<16> c;
}
struct headers_t { h_t h; }
struct meta_t {
    @name("route_class") bit<8> cls;
    @name(".wide") bit<16> w;
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set(bit<8> v, bit<9> port) { hdr.h.b = v; sm.egress_spec = port; }
    table t {
        key = {
            meta.cls: exact;
            meta.w: exact;
            hdr.h.isValid(): exact;
        }
        actions = { set; NoAction; }
        default_action = NoAction();
    }
    action mark() { hdr.h.a = hdr.h.a + 1; }
    table u {
        key = { hdr.h.c & 16w0x0F0F: exact; hdr.h.c[0x7:4]: exact; }
        actions = { mark; NoAction; }
        const entries = { (16w0x0204, 4w3): mark(); }
    }
    apply {
        sm.egress_spec = 1;
        meta.cls = hdr.h.a;
        meta.w = hdr.h.c >> 8;
        t.apply();
        u.apply();
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
