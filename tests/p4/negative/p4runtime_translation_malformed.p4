// expect-error: 11:24: malformed @p4runtime_translation: syntax error, unexpected INTEGER, expecting STRING_LITERAL
// @p4runtime_translation takes a URI string and a bit width (or string); p4c reads it where live code uses
// the type (here an action parameter), so an unused malformed one goes unnoticed
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
}
@p4runtime_translation(32, "p4.org/x")
type bit<9> port_t;
struct headers_t { h_t h; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    action to_port(port_t p) { sm.egress_spec = (bit<9>)p; }
    table t {
        key = { hdr.h.a: exact; }
        actions = { to_port; NoAction; }
    }
    apply { t.apply(); }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
