// one table applied at several places: p4c-bm2-ss accepts it when every place continues the same way (both
// branches of an `if`, several `switch` cases), because BMv2 gives a table one set of successors
#include <core.p4>
#include <v1model.p4>

header p_t {
    bit<8> kind;
    bit<8> dst;
    bit<8> mark;
    bit<8> after;
}
struct headers_t { p_t p; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.p);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    action to_port(bit<9> port) { sm.egress_spec = port; }
    action mark_a() { hdr.p.mark = 8w0xA0; }
    action mark_b() { hdr.p.mark = 8w0xB0; }
    table fwd {
        key = { hdr.p.dst : exact; }
        actions = { to_port; NoAction; }
        default_action = NoAction();
    }
    table kinds {
        key = { hdr.p.kind : exact; }
        actions = { mark_a; mark_b; NoAction; }
        const entries = {
            8w1 : mark_a();
            8w2 : mark_b();
        }
        default_action = NoAction();
    }
    table late {
        key = { hdr.p.mark : exact; }
        actions = { to_port; NoAction; }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 9w1;
        if (hdr.p.kind == 8w9) {
            hdr.p.mark = 8w0x99;
            fwd.apply();
        } else if (hdr.p.kind == 8w8) {
            fwd.apply();
        } else {
            switch (kinds.apply().action_run) {
                mark_a: { late.apply(); }
                mark_b: { late.apply(); }
            }
        }
        hdr.p.after = 8w0xEE;
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
