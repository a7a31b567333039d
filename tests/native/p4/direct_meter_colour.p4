// a direct meter in C: on a hit the runtime's DirectMeter runs on the hit entry's cell (configured per entry
// through the STF, i.e. the runtime entry) and the colour goes to the read() target, a metadata field, before
// the action; a miss leaves the target as it was; an entry without a configuration is green
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> colour; bit<8> seen; }
struct headers_t { h_t h; }
struct meta_t { bit<8> colour; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    direct_meter<bit<8>>(MeterType.packets) dm;
    action police() {
        dm.read(meta.colour);
        hdr.h.seen = meta.colour;
        sm.egress_spec = 1;
    }
    action other() { sm.egress_spec = 2; }
    table t {
        key = { hdr.h.a : exact; }
        actions = { police; other; }
        default_action = other();
        meters = dm;
    }
    apply {
        meta.colour = 0x77;
        t.apply();
        hdr.h.colour = meta.colour;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
