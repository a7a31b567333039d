// header stack elements in controls: constant indices, isValid of elements, .size, whole-element copies
#include <core.p4>
#include <v1model.p4>

header e_t { bit<8> v; }
header info_t {
    bit<8> size;
    bit<8> valid_mask;
}
struct headers_t {
    info_t  info;
    e_t[3]  s;
}
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.info);
        transition select(hdr.info.size) {
            8w0: accept;
            default: one;
        }
    }
    state one {
        pkt.extract(hdr.s.next);
        transition select(hdr.info.size) {
            8w1: accept;
            default: two;
        }
    }
    state two {
        pkt.extract(hdr.s.next);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        hdr.info.valid_mask = (bit<8>)((bit<1>)hdr.s[2].isValid() ++ (bit<1>)hdr.s[1].isValid() ++ (bit<1>)hdr.s[0].isValid());
        hdr.info.size = (bit<8>)hdr.s.size;
        if (hdr.s[1].isValid()) {
            hdr.s[2] = hdr.s[0];
            hdr.s[2].v = hdr.s[2].v + hdr.s[1].v;
        }
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
    apply {
        pkt.emit(hdr.info);
        pkt.emit(hdr.s);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
