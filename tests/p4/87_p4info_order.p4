// P4Info lists objects in p4c-bm2-ss's order (docs/p4exec-compiler.md, "P4Info order"): blocks in V1Switch
// order (MyEgress is declared first but listed after MyIngress), a sub-control's objects where its instance
// is declared, global actions first in the block that uses them (by first reference), then local actions in
// declaration order; top-level externs before all others
#include <core.p4>
#include <v1model.p4>

header p_t { bit<8> a; bit<8> b; }
struct headers_t { p_t p; }
struct meta_t { }

register<bit<8>>(4) g_reg_z;
action g_act_z() { }
action g_act_a() { }
register<bit<8>>(4) g_reg_a;

control Sub(inout headers_t hdr) {
    counter(4, CounterType.packets) s_cnt;
    action s_z() { hdr.p.b = 8w1; s_cnt.count(0); }
    action s_a() { hdr.p.b = 8w2; }
    table s_t { key = { hdr.p.a : exact; } actions = { s_z; s_a; g_act_a; } }
    apply { s_t.apply(); }
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    value_set<bit<8>>(4) pvs_z;
    value_set<bit<8>>(4) pvs_a;
    state start {
        pkt.extract(hdr.p);
        transition select(hdr.p.a) { pvs_z: accept; pvs_a: second; default: accept; }
    }
    state second { transition accept; }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    counter(4, CounterType.packets) e_cnt;
    action e_z() { e_cnt.count(0); }
    table e_t { key = { hdr.p.b : exact; } actions = { e_z; g_act_z; } }
    apply { e_t.apply(); }
}

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    counter(4, CounterType.packets) i_cnt_z;
    action i_z() { i_cnt_z.count(0); }
    action i_y() { g_reg_a.write(0, 8w1); g_reg_z.write(0, 8w1); }
    table i_t2 { key = { hdr.p.b : exact; } actions = { i_y; i_z; } }
    Sub() sub_z;
    table i_t1 { key = { hdr.p.a : exact; } actions = { i_z; g_act_z; i_y; } }
    Sub() sub_a;
    counter(4, CounterType.packets) i_cnt_a;
    action i_a() { i_cnt_a.count(0); }
    table i_t0 { key = { hdr.p.a : exact; } actions = { i_a; } }
    apply {
        i_t0.apply();
        sub_a.apply(hdr);
        i_t1.apply();
        sub_z.apply(hdr);
        i_t2.apply();
        sm.egress_spec = 9w1;
    }
}

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
