// register<T>(N) read/write across packets, control-plane register_write
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  op;
    bit<8>  idx;
    bit<32> val;
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
    register<bit<32>>(8) store;
    apply {
        bit<32> old;
        store.read(old, (bit<32>)hdr.h.idx);
        if (hdr.h.op == 8w1) {
            store.write((bit<32>)hdr.h.idx, hdr.h.val);
        } else if (hdr.h.op == 8w2) {
            store.write((bit<32>)hdr.h.idx, old + 32w1);
        }
        hdr.h.val = old;
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
