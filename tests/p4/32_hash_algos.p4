// hash() with crc16_custom (default parameters = crc16), identity, csum16 and xor16
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<16> a;
    bit<8>  b;
    bit<32> c;
    bit<16> hcust;
    bit<32> hid;
    bit<16> hcsum;
    bit<16> hxor;
    bit<16> hid12;
}
struct headers_t { h_t h; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        hash(hdr.h.hcust, HashAlgorithm.crc16_custom, 16w0, { hdr.h.a, hdr.h.b, hdr.h.c }, 32w65536);
        hash(hdr.h.hid, HashAlgorithm.identity, 32w0, { hdr.h.b, hdr.h.a }, 64w4294967296);
        hash(hdr.h.hcsum, HashAlgorithm.csum16, 16w0, { hdr.h.a, hdr.h.b, hdr.h.c }, 32w65536);
        hash(hdr.h.hxor, HashAlgorithm.xor16, 16w0, { hdr.h.a, hdr.h.b, hdr.h.c }, 32w65536);
        // 12 bits are padded with zero bits to two bytes before hashing
        hash(hdr.h.hid12, HashAlgorithm.identity, 16w0, { hdr.h.a[11:0] }, 32w65536);
        sm.egress_spec = 9w1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) {
    apply { }
}

control MyCompute(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
