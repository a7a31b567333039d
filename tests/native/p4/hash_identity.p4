// the identity hash (the first 8 bytes of the field list, big-endian) over a list longer than 8 bytes, reduced
// by a max that is not a power of two, and over a short list; csum16 through the hash extern
#include <core.p4>
#include <v1model.p4>

header h_t { bit<32> a; bit<40> b; bit<16> c; bit<16> x; bit<16> y; bit<16> z; }
struct headers_t { h_t h; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hash(hdr.h.x, HashAlgorithm.identity, 16w3, { hdr.h.a, hdr.h.b, hdr.h.c }, 32w1000);
        hash(hdr.h.y, HashAlgorithm.identity, 16w0, { hdr.h.c }, 32w65536);
        hash(hdr.h.z, HashAlgorithm.csum16, 16w0, { hdr.h.a, hdr.h.c }, 32w65536);
        sm.egress_spec = 9w2;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
