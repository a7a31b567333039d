// expect-error: 9:46: malformed @p4runtime_translation: syntax error, unexpected ",", expecting END_ANNOTATION
// a typedef is transparent in P4Info, but p4c still parses its @p4runtime_translation once live code uses it
// (here a metadata field), and stops at a third argument
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; }

@p4runtime_translation("example.org/port", 32, 1)
typedef bit<9> port_t;

struct headers_t { h_t h; }
struct meta_t { port_t out_port; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { meta.out_port = (port_t)hdr.h.a; sm.egress_spec = meta.out_port; }
}
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
