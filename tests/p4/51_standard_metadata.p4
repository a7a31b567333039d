// standard_metadata in ingress and egress: ingress_port, egress_spec/egress_port, packet_length, instance_type
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<16> in_port;
    bit<16> out_port;
    bit<32> len;
    bit<8>  itype;
    bit<8>  err;
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
        hdr.h.in_port = (bit<16>)sm.ingress_port;
        sm.egress_spec = sm.ingress_port + 9w1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) {
    apply {
        hdr.h.out_port = (bit<16>)sm.egress_port;
        hdr.h.len = sm.packet_length;
        hdr.h.itype = (bit<8>)sm.instance_type;
        hdr.h.err = sm.parser_error == error.NoError ? 8w0 : 8w1;
    }
}

control MyCompute(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
