// expect-error: 24:13: clone3: unknown extern function
// v1model.p4 still declares clone3, but p4c-bm2-ss v1.2.4.17 cannot convert it for BMv2
#include <core.p4>
#include <v1model.p4>

header pkt_t {
    bit<8> kind;
}
struct headers_t { pkt_t p; }
struct meta_t { bit<8> copy_of_kind; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.p); transition accept; }
}

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 9w2; }
}

control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (sm.instance_type == 32w0) {
            meta.copy_of_kind = hdr.p.kind;
            clone3(CloneType.E2E, 32w3, { meta.copy_of_kind });
        }
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.p); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
