// varbit in C: a varbit field that starts 4 bits into its header with a field after it (bit offsets that move
// with the run-time length), a varbit header extracted with length 0, a length above the maximum
// (HeaderTooShort) and not whole bytes (ParserInvalidArgument), a crc32 hash over a field list holding the
// varbit, equality of varbits, and assignment.
#include <core.p4>
#include <v1model.p4>

header len_t { bit<8> nbits; }
header v_t {
    bit<4>     a;
    varbit<64> d;
    bit<4>     b;
}
header z_t {
    varbit<16> z;
    bit<8>     tail;
}
header out_t {
    bit<32> h;
    bit<8>  same;
    bit<8>  err;
}
struct headers_t { len_t len; v_t v; z_t z; v_t v2; out_t res; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.len);
        pkt.extract(hdr.v, (bit<32>)hdr.len.nbits);
        pkt.extract(hdr.z, 32w0);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 9w1;
        hdr.res.setValid();
        if (sm.parser_error == error.NoError) { hdr.res.err = 0; }
        else if (sm.parser_error == error.HeaderTooShort) { hdr.res.err = 1; }
        else if (sm.parser_error == error.ParserInvalidArgument) { hdr.res.err = 2; }
        else if (sm.parser_error == error.PacketTooShort) { hdr.res.err = 3; }
        else { hdr.res.err = 4; }
        if (hdr.v.isValid()) {
            hash(hdr.res.h, HashAlgorithm.crc32, 32w0, { hdr.v.a, hdr.v.d, hdr.v.b }, 32w0xFFFFFFFF);
            hdr.v2.setValid();
            hdr.v2.a = hdr.v.b;
            hdr.v2.d = hdr.v.d;
            hdr.v2.b = hdr.v.a;
            hdr.res.same = hdr.v2.d == hdr.v.d ? 8w1 : 8w0;
            hdr.v.b = hdr.v.b + 1;
        }
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.len); pkt.emit(hdr.v); pkt.emit(hdr.z); pkt.emit(hdr.v2); pkt.emit(hdr.res); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
