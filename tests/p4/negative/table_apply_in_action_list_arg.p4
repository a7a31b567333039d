// expect-error: 24:17: table invocation in an argument of action 'put' in a table's action list
// a bound argument in an action list runs inside the action, where p4c allows no table invocation (a function
// call there is fine, tests/p4/102_initializer_calls)
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
}
struct headers_t { h_t h; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action put(in bool v) { hdr.h.b = v ? 8w1 : 8w0; }
    table probe { key = { hdr.h.a: exact; } actions = { NoAction; } }
    table outer {
        key = { hdr.h.b: exact; }
        actions = {
            put(probe.apply().hit);
        }
    }
    apply { outer.apply(); }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
