// the deparser emits a stack element chosen at run time (evaluated once, then emitted when valid); an index
// past the stack is a run-time fault that drops the packet on both pipelines
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> i; }
header e_t { bit<8> v; }
struct headers_t { h_t h; e_t[3] s; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); pkt.extract(hdr.s[0]); pkt.extract(hdr.s[1]); transition accept; }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 9w2; }
}

control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.h); pkt.emit(hdr.s[hdr.h.i]); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
