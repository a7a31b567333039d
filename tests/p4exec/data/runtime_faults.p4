// Every run-time fault class of generated code, selected by op.kind (see tests/p4exec/test_runtime_faults.py).
#include <core.p4>
#include <v1model.p4>

header op_t { bit<8> kind; bit<8> idx; bit<8> a; bit<8> b; }
header e_t { bit<8> v; }
struct headers_t { op_t op; e_t[2] s; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.op);
        transition select(hdr.op.kind) {
            8w10: dynamic;
            default: both;
        }
    }
    state both { pkt.extract(hdr.s[0]); pkt.extract(hdr.s[1]); transition accept; }
    state dynamic { pkt.extract(hdr.s[hdr.op.idx]); transition accept; }
}
control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action bump(inout e_t e) { e.v = e.v + 1; }
    action read_into(out bit<8> x, in e_t e) { x = e.v; }
    apply {
        sm.egress_spec = 1;
        if (hdr.op.kind == 1) { hdr.op.a = hdr.s[hdr.op.idx].v; }
        else if (hdr.op.kind == 2) { hdr.s[hdr.op.idx].v = 7; }
        else if (hdr.op.kind == 3) { bump(hdr.s[hdr.op.idx]); }
        else if (hdr.op.kind == 4) { hdr.op.a = hdr.op.a / hdr.op.b; }
        else if (hdr.op.kind == 5) { hdr.op.a = hdr.op.a % hdr.op.b; }
        else if (hdr.op.kind == 6) { hdr.op.a = hdr.op.a << hdr.op.b; }
        else if (hdr.op.kind == 7) { hdr.s[hdr.op.idx].setInvalid(); }
        else if (hdr.op.kind == 8) { read_into(hdr.op.a, hdr.s[hdr.op.idx]); }
        else if (hdr.op.kind == 9) { hdr.op.a = (bit<8>)(bit<1>)hdr.s[hdr.op.idx].isValid(); }
    }
}
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { if (hdr.op.kind == 12) { hdr.op.a = hdr.op.a / hdr.op.b; } }
}
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.op); pkt.emit(hdr.s); } }
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
