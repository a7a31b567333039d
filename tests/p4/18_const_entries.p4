// const entries: exact tuples and ternary masks; the first matching entry in program order wins
// (p4c rejects priorities in const entries, see 84_entry_priorities for `entries` with priorities)
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> r1;
    bit<8> r2;
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
    action set_r1(bit<8> v) { hdr.h.r1 = v; }
    action set_r2(bit<8> v) { hdr.h.r2 = v; }
    table ex {
        key = {
            hdr.h.a : exact;
            hdr.h.b : exact;
        }
        actions = { set_r1; NoAction; }
        const entries = {
            (8w1, 8w1) : set_r1(8w0x11);
            (8w1, 8w2) : set_r1(8w0x12);
        }
        default_action = NoAction();
    }
    table tern {
        key = { hdr.h.a : ternary; }
        actions = { set_r2; NoAction; }
        const entries = {
            8w0x01 &&& 8w0x0F : set_r2(8w0xA1);
            8w0x11 &&& 8w0xFF : set_r2(8w0xA2);
            8w0x00 &&& 8w0x00 : set_r2(8w0xA0);
        }
        default_action = NoAction();
    }
    apply {
        ex.apply();
        tern.apply();
        sm.egress_spec = 9w1;
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
