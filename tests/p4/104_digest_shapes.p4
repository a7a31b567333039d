/* Three digests whose data take three P4Data shapes over P4Runtime, as their P4Info type_spec says:
 * a list expression (p4c types it as a tuple and names the digest digest_0), a named struct, and a single
 * field (a bitstring). The last byte of the destination picks which one a frame sends (BMv2 sends only the
 * last digest a packet calls, so a frame sends one). */
#include <core.p4>
#include <v1model.p4>

header eth_t {
    bit<48> dst;
    bit<48> src;
    bit<16> kind;
}
struct headers_t { eth_t eth; }
struct seen_t {
    bit<48> src;
    bit<9>  port;
}
struct meta_t { bit<8> unused; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); transition accept; }
}

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (hdr.eth.dst[7:0] == 1) {
            digest(1, { hdr.eth.src, sm.ingress_port });
        } else if (hdr.eth.dst[7:0] == 2) {
            digest<seen_t>(1, { hdr.eth.src, sm.ingress_port });
        } else {
            digest(1, hdr.eth.kind);
        }
        sm.egress_spec = 1;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.eth); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
