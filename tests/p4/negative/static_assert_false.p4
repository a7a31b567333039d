// expect-error: 7:22: static_assert failed: STEP must be 1..7
// a static_assert whose condition is false refuses the program with its message (p4c: the same message)
#include <core.p4>
#include <v1model.p4>

const bit<8> STEP = 8w9;
const bool step_ok = static_assert(STEP > 0 && STEP < 8, "STEP must be 1..7");
const bool version_ok = static_assert(V1MODEL_VERSION >= 20180101);

header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        static_assert(STEP != 0);
        hdr.h.a = hdr.h.a + STEP;
        if (step_ok && version_ok) {
            hdr.h.b = 8w1;
        }
        sm.egress_spec = 9w2;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
