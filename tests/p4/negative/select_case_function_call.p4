// expect-error: 12:9: no function calls allowed in this context
// a function call as a select label (p4c: no calls in this context, even a constant one)
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<16> c; }
bit<8> f() { return 8w3; }
struct headers_t { h_t h; h_t h2; }
struct meta_t { bit<8> m; bit<16> w; }
parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h);
      transition select(hdr.h.a) {
        f(): next;
        default: accept;
      }
    }
    state next { pkt.extract(hdr.h2); transition accept; }
}
control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply {} }
control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
