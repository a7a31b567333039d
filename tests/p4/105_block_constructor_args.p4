// Control- and parser-typed constructor parameters: a block passed to another as a constructor call
// (`Twice(Double())`, `MyParserT(Sub())`), nested, in `main` and in an instance declared inside a control;
// the same block type given two different implementations.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
}
struct headers_t { h_t h; }
struct meta_t { bit<8> unused; }

parser SubT(packet_in pkt, out h_t h);
parser Sub(packet_in pkt, out h_t h) {
    state start { pkt.extract(h); transition accept; }
}
parser MyParserT(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm)(SubT s) {
    state start { s.apply(pkt, hdr.h); transition accept; }
}

control StepT(inout bit<8> v);
control AddOne(inout bit<8> v) { apply { v = v + 1; } }
control Double(inout bit<8> v) { apply { v = v << 1; } }
control Twice(inout bit<8> v)(StepT step) {
    apply {
        step.apply(v);
        step.apply(v);
    }
}

control MyIngressT(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm)(StepT first, StepT second) {
    Twice(AddOne()) inner;
    apply {
        first.apply(hdr.h.a);
        second.apply(hdr.h.b);
        inner.apply(hdr.h.b);
        sm.egress_spec = 1;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(MyParserT(Sub()), MyVerify(), MyIngressT(Twice(Double()), AddOne()), MyEgress(), MyCompute(),
         MyDeparser()) main;
