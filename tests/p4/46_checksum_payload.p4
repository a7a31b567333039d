// verify_checksum_with_payload / update_checksum_with_payload cover the unparsed payload
#include <core.p4>
#include <v1model.p4>

header l4_t {
    bit<16> sport;
    bit<16> len;
    bit<16> csum;
}
struct headers_t { l4_t l4; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.l4);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) {
    apply {
        verify_checksum_with_payload(hdr.l4.isValid(), { hdr.l4.sport, hdr.l4.len },
                                     hdr.l4.csum, HashAlgorithm.csum16);
    }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        if (sm.checksum_error == 1w1) {
            sm.egress_spec = 9w2;
        } else {
            sm.egress_spec = 9w1;
        }
        hdr.l4.sport = hdr.l4.sport + 16w1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) {
    apply { }
}

control MyCompute(inout headers_t hdr, inout meta_t meta) {
    apply {
        update_checksum_with_payload(hdr.l4.isValid(), { hdr.l4.sport, hdr.l4.len },
                                     hdr.l4.csum, HashAlgorithm.csum16);
    }
}

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
