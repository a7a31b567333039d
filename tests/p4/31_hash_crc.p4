// hash() with crc16 (CRC-16/ARC) and crc32 (CRC-32/ISO-HDLC) over a field-list tuple, base + (H % max)
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<16> a;
    bit<8>  b;
    bit<32> c;
    bit<16> h16;
    bit<32> h32;
    bit<16> hmod;
    bit<16> hbits;
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
        hash(hdr.h.h16, HashAlgorithm.crc16, 16w0, { hdr.h.a, hdr.h.b, hdr.h.c }, 32w65536);
        hash(hdr.h.h32, HashAlgorithm.crc32, 32w0, { hdr.h.a, hdr.h.b, hdr.h.c }, 64w4294967296);
        hash(hdr.h.hmod, HashAlgorithm.crc16, 16w100, { hdr.h.a }, 32w10);
        // 9 + 7 bits: the fields are packed bit by bit, not byte-aligned each
        hash(hdr.h.hbits, HashAlgorithm.crc16, 16w0, { hdr.h.a[8:0], hdr.h.b[6:0] }, 32w65536);
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
