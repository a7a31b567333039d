// A digest carrying an error and a plain enum (32 bits each on BMv2), and log_msg of both: P4Info names them
// as `error {}` / `enum { name }` with their members in type_info, as p4c writes it
#include <core.p4>
#include <v1model.p4>

enum colour_t { RED, GREEN, BLUE }

header h_t {
    bit<8> a;
    bit<8> b;
}
struct headers_t { h_t h; }
struct meta_t { }
struct learn_t {
    error    e;
    colour_t c;
    bit<8>   a;
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        learn_t l;
        l.e = sm.parser_error;
        l.c = hdr.h.a == 1 ? colour_t.GREEN : colour_t.BLUE;
        l.a = hdr.h.a;
        digest<learn_t>(1, l);
        log_msg("error {} colour {}", { l.e, l.c });
        sm.egress_spec = 2;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
