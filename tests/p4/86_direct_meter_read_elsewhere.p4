// direct_meter.read(x) as p4c-bm2-ss compiles it: x is the meter's result target, written when the meter's
// table hits an entry; the read itself does nothing where it stands (here: after the apply, and in an action
// of another table). A miss leaves x alone; an unconfigured meter says green (0). (No assignment to x before
// the reads: p4c treats a read as a write of x and drops an earlier store to it as dead.) Checked on BMv2.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> colour;
    bit<8> seen;
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

control MyVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    direct_meter<bit<8>>(MeterType.packets) dm;
    action to_two() { sm.egress_spec = 9w2; }
    action watch() {
        dm.read(hdr.h.colour);
        hdr.h.seen = 8w1;
    }
    table metered {
        key = { hdr.h.a : exact; }
        actions = { to_two; NoAction; }
        default_action = NoAction();
        meters = dm;
    }
    table watcher {
        key = { hdr.h.a : exact; }
        actions = { watch; NoAction; }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 9w1;
        watcher.apply();
        metered.apply();
        dm.read(hdr.h.colour);
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
    apply { pkt.emit(hdr); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
