// expect-error: 22:26: anonymous table property 'implementation' with no name annotation
// an action profile constructed in the table property has no control-plane name, so p4c's P4Runtime
// serializer (and p4exec, which always serves P4Runtime) rejects it
#include <core.p4>
#include <v1model.p4>

header pkt_t {
    bit<8> flow;
}
struct headers_t { pkt_t p; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.p); transition accept; }
}

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action to_port(bit<9> port) { sm.egress_spec = port; }
    table by_flow {
        key = { hdr.p.flow: exact; }
        actions = { to_port; NoAction; }
        implementation = action_profile(32w16);
    }
    apply { by_flow.apply(); }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.p); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
