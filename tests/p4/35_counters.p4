// indexed counter<I> (packets, bytes, both) and a register<T, I> pair with V1MODEL_VERSION 20200408
#define V1MODEL_VERSION 20200408
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  idx;
    bit<8>  seen;
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
    counter<bit<8>>(16, CounterType.packets) pkts;
    counter<bit<8>>(16, CounterType.bytes) octets;
    counter<bit<8>>(16, CounterType.packets_and_bytes) both;
    register<bit<8>, bit<8>>(16) seen;
    apply {
        pkts.count(hdr.h.idx);
        octets.count(hdr.h.idx);
        both.count(hdr.h.idx);
        bit<8> n;
        seen.read(n, hdr.h.idx);
        n = n + 8w1;
        seen.write(hdr.h.idx, n);
        hdr.h.seen = n;
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
