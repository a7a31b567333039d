// What p4c leaves out of P4Info, and p4exec with it: a table applied only in the dead arm of a constant
// `?:` and of `if (false)`, a direct counter and a direct meter attached to tables nothing applies, a register
// whose read result nothing uses, and actions only ever called directly (inlined). What stays: a table
// applied in the live arm, a register whose value is used, an action both called directly and listed.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
}
struct headers_t { h_t h; }
struct meta_t { bit<2> colour; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    direct_counter(CounterType.packets) dead_hits;
    direct_meter<bit<2>>(MeterType.packets) dead_rate;
    register<bit<8>>(4) ignored_reg;
    register<bit<8>>(4) used_reg;

    action only_direct() { hdr.h.c = hdr.h.c + 1; }
    action both(bit<8> v) { hdr.h.b = v; }
    action count_it() { dead_hits.count(); }
    action meter_it() { dead_rate.read(meta.colour); }

    table live {
        key = { hdr.h.a: exact; }
        actions = { both; NoAction; }
        default_action = both(0x11);
    }
    table in_dead_arm {
        key = { hdr.h.a: exact; }
        actions = { NoAction; }
    }
    table in_dead_if {
        key = { hdr.h.b: exact; }
        actions = { count_it; NoAction; }
        counters = dead_hits;
    }
    table metered_dead {
        key = { hdr.h.c: exact; }
        actions = { meter_it; NoAction; }
        meters = dead_rate;
    }
    apply {
        bool hit = false ? in_dead_arm.apply().hit : live.apply().hit;
        if (false) {
            in_dead_if.apply();
            metered_dead.apply();
        }
        bit<8> never_used;
        ignored_reg.read(never_used, 0);
        bit<8> kept;
        used_reg.read(kept, 1);
        only_direct();
        both(hdr.h.b + kept);
        sm.egress_spec = hit ? 9w2 : 9w1;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
