// parser dispatch on standard_metadata.ingress_port and on a 4-bit lookahead (IP version style)
#include <core.p4>
#include <v1model.p4>

header v4_t {
    bit<4> version;
    bit<4> ihl;
    bit<8> x;
}
header v6_t {
    bit<4>  version;
    bit<12> label;
}
header cpu_t { bit<8> reason; }
struct headers_t {
    cpu_t cpu;
    v4_t  v4;
    v6_t  v6;
}
struct meta_t { bit<8> kind; }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        transition select(sm.ingress_port) {
            9w64: from_cpu;
            default: dispatch;
        }
    }
    state from_cpu {
        pkt.extract(hdr.cpu);
        transition dispatch;
    }
    state dispatch {
        transition select(pkt.lookahead<bit<4>>()) {
            4w4: v4;
            4w6: v6;
            default: accept;
        }
    }
    state v4 {
        pkt.extract(hdr.v4);
        meta.kind = 8w4;
        transition accept;
    }
    state v6 {
        pkt.extract(hdr.v6);
        meta.kind = 8w6;
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        if (hdr.cpu.isValid()) {
            hdr.cpu.setInvalid();
            sm.egress_spec = (bit<9>)hdr.cpu.reason;
        } else {
            sm.egress_spec = 9w1;
        }
        if (hdr.v4.isValid()) {
            hdr.v4.x = meta.kind;
        } else if (hdr.v6.isValid()) {
            hdr.v6.label = (bit<12>)meta.kind;
        }
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
        pkt.emit(hdr.cpu);
        pkt.emit(hdr.v4);
        pkt.emit(hdr.v6);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
