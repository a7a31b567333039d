// header stacks: extract into .next in a loop, .last, push_front, pop_front, indexing
#include <core.p4>
#include <v1model.p4>

header tag_t {
    bit<7> val;
    bit<1> bos;
}
header info_t {
    bit<8> count;
    bit<8> last_val;
}
struct headers_t {
    info_t    info;
    tag_t[4]  tags;
}
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.info);
        transition parse_tag;
    }
    state parse_tag {
        pkt.extract(hdr.tags.next);
        hdr.info.last_val = (bit<8>)hdr.tags.last.val;
        transition select(hdr.tags.last.bos) {
            1w1: accept;
            default: parse_tag;
        }
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        if (hdr.info.count == 8w1) {
            // push a new tag in front
            hdr.tags.push_front(1);
            hdr.tags[0].setValid();
            hdr.tags[0].val = 7w0x55;
            hdr.tags[0].bos = 1w0;
        } else if (hdr.info.count == 8w2) {
            hdr.tags.pop_front(1);
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
        pkt.emit(hdr.tags);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
