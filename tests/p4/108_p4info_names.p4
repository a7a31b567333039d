// Names in P4Info as p4c writes them: a struct nested in a @controller_header header gives metadata named
// `inner.tag`, `inner.hops`; @name on a control declaration is ignored (the block keeps its instance name);
// non-ASCII @name text is written as UTF-8 once. A const entry's keyset may be written as a list `{k}`.
#include <core.p4>
#include <v1model.p4>

struct inner_t {
    bit<8> tag;
    bit<8> hops;
}
@controller_header("packet_in")
header pin_t {
    bit<9>  ingress_port;
    inner_t inner;
    bit<7>  pad;
}
header h_t {
    bit<8>  a;
    bit<16> w;
}
struct headers_t {
    pin_t pin;
    h_t   h;
}
struct meta_t { bit<8> unused; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

@name("Renamed")
control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    @name("marqué") action mark(bit<8> v) { hdr.h.a = v; }
    @name("tablé_ü") table by_w {
        key = { hdr.h.w: exact @name("clé"); }
        actions = { mark; NoAction; }
        default_action = NoAction();
        const entries = {
            {16w0x1234} : mark(0xAA);    // a list expression as the keyset of a one-key table
        }
    }
    apply {
        by_w.apply();
        sm.egress_spec = 1;
        if (hdr.h.a == 0xCC) {
            hdr.pin.setValid();
            hdr.pin.ingress_port = sm.ingress_port;
            hdr.pin.inner.tag = 7;
            hdr.pin.inner.hops = 1;
        }
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.pin);
        pkt.emit(hdr.h);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
