// range match kind with const entries (earlier entries win on overlap)
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<16> port;
    bit<8>  cls;
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
    action set_cls(bit<8> c) { hdr.h.cls = c; }
    table classify {
        key = { hdr.h.port : range; }
        actions = { set_cls; NoAction; }
        const entries = {
            16w0 .. 16w1023      : set_cls(8w1);
            16w1024 .. 16w49151  : set_cls(8w2);
            16w8000 .. 16w8080   : set_cls(8w9);
            16w49152 .. 16w65535 : set_cls(8w3);
        }
        default_action = NoAction();
    }
    apply {
        classify.apply();
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
