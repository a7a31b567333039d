// expect-error: 24:22: which is not an action of table MyIngress.t
// v1model: direct_meter.read() in an action of a table that is not the one with `meters = dm`
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
    direct_meter<bit<8>>(MeterType.packets) dm;
    action color() { dm.read(hdr.h.b); }
    table t {
        key = { hdr.h.a: exact; }
        actions = { NoAction; }
        meters = dm;
    }
    table u {
        key = { hdr.h.b: exact; }
        actions = { color; }
    }
    apply {
        t.apply();
        u.apply();
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
