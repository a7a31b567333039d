// expect-error: 20:19: result of type bit<8> for a direct_meter<bit<2>>
// direct_meter<T>.read(out T result): the result must have the meter's declared type T (p4c: type error)
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; }
struct headers_t { h_t h; }
struct meta_t { bit<8> colour; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    direct_meter<bit<2>>(MeterType.packets) rate;
    action meter_it() {
        sm.egress_spec = 1;
        // the meter's colour is bit<2>; the result here is bit<8>
        // (the error points at the argument)
        rate.read(meta.colour);
    }
    table t {
        key = { hdr.h.a: exact; }
        actions = { meter_it; NoAction; }
        meters = rate;
    }
    apply { t.apply(); }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
