// enum, enum bit<N> (serializable) and select on enum members; custom error
#include <core.p4>
#include <v1model.p4>

enum bit<8> Kind { PING = 8w1, PONG = 8w2, DATA = 8w0x10 }
enum Colour { RED, GREEN }
error { BadKind }

header h_t {
    bit<8> kind;
    bit<8> res;
}
struct headers_t { h_t h; }
struct meta_t { Colour c; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select((Kind)hdr.h.kind) {
            Kind.PING: ping;
            Kind.PONG: pong;
            default: other;
        }
    }
    state ping { meta.c = Colour.RED; transition accept; }
    state pong { meta.c = Colour.GREEN; transition accept; }
    state other {
        verify(hdr.h.kind == (bit<8>)Kind.DATA, error.BadKind);
        meta.c = Colour.GREEN;
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        Kind k = (Kind)hdr.h.kind;
        if (sm.parser_error == error.BadKind) {
            hdr.h.res = 8w0xEE;
        } else if (meta.c == Colour.RED) {
            hdr.h.res = (bit<8>)Kind.PONG;
        } else if (k == Kind.DATA) {
            hdr.h.res = 8w0xDD;
        } else {
            hdr.h.res = 8w0x77;
        }
        sm.egress_spec = 9w2;
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
