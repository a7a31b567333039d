// varbit<N>: IPv4-style options extracted with extract(hdr, len), emitted, copied, compared, sized
// (minSizeInBits/maxSizeInBits) and covered by verify_checksum/update_checksum
#include <core.p4>
#include <v1model.p4>

header base_t {
    bit<4>  version;
    bit<4>  ihl;          // length in 32-bit words, options included
    bit<8>  tag;
    bit<16> csum;
}
header opts_t {
    varbit<320> data;
}
header copy_t {
    varbit<320> data;
}
header res_t {
    bit<8>  min_bits;
    bit<16> max_bits;
    bit<8>  same;
    bit<8>  csum_ok;
}
struct headers_t {
    base_t base;
    opts_t opts;
    copy_t copy;
    res_t  res;
}
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.base);
        pkt.extract(hdr.opts, (bit<32>)(((bit<16>)hdr.base.ihl - 1) * 32));
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) {
    apply {
        verify_checksum(hdr.base.isValid(),
                        { hdr.base.version, hdr.base.ihl, hdr.base.tag, hdr.opts.data },
                        hdr.base.csum, HashAlgorithm.csum16);
    }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        hdr.res.setValid();
        hdr.res.min_bits = (bit<8>)hdr.opts.minSizeInBits();
        hdr.res.max_bits = (bit<16>)hdr.opts.maxSizeInBits();
        hdr.res.csum_ok = sm.checksum_error == 0 ? 8w1 : 8w0;
        hdr.copy.setValid();
        hdr.copy.data = hdr.opts.data;
        hdr.res.same = hdr.copy.data == hdr.opts.data ? 8w1 : 8w0;
        if (hdr.base.tag == 8w1) {
            hdr.copy.setInvalid();     // the copy is only sent when tag != 1
        }
        hdr.base.tag = hdr.base.tag + 1;
        sm.egress_spec = 9w1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) {
    apply { }
}

control MyCompute(inout headers_t hdr, inout meta_t meta) {
    apply {
        update_checksum(hdr.base.isValid(),
                        { hdr.base.version, hdr.base.ihl, hdr.base.tag, hdr.opts.data },
                        hdr.base.csum, HashAlgorithm.csum16);
    }
}

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
