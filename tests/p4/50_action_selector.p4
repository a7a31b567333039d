// a table with implementation = action_selector (crc16) and selector key fields
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<32> src;
    bit<32> dst;
    bit<8>  r;
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
    action set_port(bit<9> port) {
        sm.egress_spec = port;
        hdr.h.r = (bit<8>)port;
    }
    // a named instance: p4c's P4Runtime serializer rejects one constructed anonymously in the property
    action_selector(HashAlgorithm.crc16, 32w64, 32w16) ecmp_sel;
    table ecmp {
        key = {
            hdr.h.dst : exact;
            hdr.h.src : selector;
        }
        actions = { set_port; NoAction; }
        implementation = ecmp_sel;
        const default_action = NoAction();
    }
    apply {
        sm.egress_spec = 9w2;
        switch (ecmp.apply().action_run) {
            NoAction: { hdr.h.r = 8w0x4E; }
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
    apply { pkt.emit(hdr); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
