// Sub-parsers in C: nested (Outer applies Inner, which loops over a header stack), scalar out/inout arguments
// copied out on accept, and errors raised inside a sub-parser stopping the whole parser at its offset:
// StackOutOfBounds and PacketTooShort in the inner one, a failed verify and an explicit reject in the outer one.
#include <core.p4>
#include <v1model.p4>

header a_t { bit<8> kind; }
header b_t { bit<16> v; }
header s_t { bit<8> x; }
header res_t { bit<8> seen; bit<8> err; bit<8> nst; }
struct headers_t { a_t a; b_t b; s_t[3] st; res_t res; }
struct meta_t { bit<8> seen; }

parser Inner(packet_in pkt, inout s_t[3] st, inout bit<8> cnt) {
    state start {
        pkt.extract(st.next);
        cnt = cnt + 1;
        transition select(st.last.x) {
            8w0: accept;
            default: start;
        }
    }
}

parser Outer(packet_in pkt, out b_t b, inout s_t[3] st, out bit<8> seen) {
    Inner() inner;
    state start {
        seen = 8w0x80;
        pkt.extract(b);
        verify(b.v != 16w0x1234, error.HeaderTooShort);
        transition select(b.v) {
            16w0xFFFF: reject;
            16w0: accept;
            default: more;
        }
    }
    state more {
        inner.apply(pkt, st, seen);
        transition accept;
    }
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    Outer() outer;
    state start {
        meta.seen = 8w7;
        pkt.extract(hdr.a);
        transition select(hdr.a.kind) {
            8w1: sub;
            default: accept;
        }
    }
    state sub {
        outer.apply(pkt, hdr.b, hdr.st, meta.seen);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 9w1;
        hdr.res.setValid();
        // a sub-parser's out values after a reject or error (BMv2 keeps its writes) are pinned by
        // sub_parser_reject_outs.p4; here only the accepted ones are looked at
        if (sm.parser_error == error.NoError && !(hdr.b.isValid() && hdr.b.v == 16w0xFFFF)) {
            hdr.res.seen = meta.seen;
        } else {
            hdr.res.seen = 8w0xEE;
        }
        if (sm.parser_error == error.NoError) { hdr.res.err = 0; }
        else if (sm.parser_error == error.StackOutOfBounds) { hdr.res.err = 1; }
        else if (sm.parser_error == error.PacketTooShort) { hdr.res.err = 2; }
        else if (sm.parser_error == error.HeaderTooShort) { hdr.res.err = 3; }
        else { hdr.res.err = 4; }
        hdr.res.nst = 0;
        if (hdr.st[0].isValid()) { hdr.res.nst = hdr.res.nst + 1; }
        if (hdr.st[1].isValid()) { hdr.res.nst = hdr.res.nst + 1; }
        if (hdr.st[2].isValid()) { hdr.res.nst = hdr.res.nst + 1; }
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.a); pkt.emit(hdr.b); pkt.emit(hdr.st); pkt.emit(hdr.res); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
