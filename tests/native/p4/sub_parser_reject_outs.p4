// A sub-parser that rejects still hands its writes back, as BMv2 does: p4c inlines it with the caller's arguments
// in place of its parameters, so what it wrote before `transition reject`, a failed verify or a PacketTooShort
// extract stays (scalar out and inout, out and inout headers, struct fields), nested sub-parsers included, and
// an `out` header starts invalid. Arguments here never alias (p4c copies aliased ones through temporaries) and
// the caller stores nothing into an `out` argument before the call (p4c deletes such a store as dead).
#include <core.p4>
#include <v1model.p4>

header a_t { bit<8> kind; }
header h_t { bit<8> v; }
header res_t {
    bit<8> o; bit<8> io; bit<8> px; bit<8> py; bit<8> qx; bit<8> qy;
    bit<8> hov; bit<8> ho; bit<8> hiov; bit<8> hio; bit<8> inv; bit<8> err;
}
struct pair_t { bit<8> x; bit<8> y; }
struct headers_t { a_t a; h_t ho; h_t hio; res_t res; }
struct meta_t { bit<8> o; bit<8> io; pair_t pr; pair_t po; bit<8> inv; }

parser Deep(packet_in pkt, inout bit<8> d, out h_t dh) {
    state start {
        d = d + 8w0x10;
        pkt.extract(dh);
        verify(dh.v == 8w0, error.HeaderTooShort);
        transition accept;
    }
}

parser Sub(packet_in pkt, in bit<8> kind, out bit<8> o, inout bit<8> io, out h_t ho, inout h_t hio,
           inout pair_t pr, out pair_t po, in bit<8> inv) {
    Deep() deep;
    state start {
        io = io + 1;
        transition select(kind) {
            8w0: ok;
            8w1: w_reject;
            8w2: w_verify;
            8w3: w_short;
            8w4: reject;
            8w5: inval;
            8w6: nested;
            default: accept;
        }
    }
    state ok {
        o = 8w0xA0; pr.x = 8w0xA1; po.x = 8w0xA2; po.y = 8w0xA3;
        pkt.extract(ho);
        transition accept;
    }
    state w_reject {
        o = 8w0xB0; pr.x = 8w0xB1; po.x = 8w0xB2;
        transition reject;
    }
    state w_verify {
        o = 8w0xC0; pr.y = 8w0xC1; po.y = 8w0xC2;
        pkt.extract(hio);
        verify(false, error.HeaderTooShort);
        transition accept;
    }
    state w_short {
        o = 8w0xD0;
        pkt.extract(ho);
        pkt.extract(hio);
        transition accept;
    }
    state inval {
        hio.setInvalid();
        o = 8w0xE0;
        transition reject;
    }
    state nested {
        o = 8w0xF0;
        deep.apply(pkt, io, ho);
        transition accept;
    }
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    Sub() sub;
    state start {
        meta.io = 8w0x22; meta.pr.x = 8w0x33; meta.pr.y = 8w0x44; meta.inv = 8w0x55;
        pkt.extract(hdr.a);
        pkt.extract(hdr.ho);
        pkt.extract(hdr.hio);
        sub.apply(pkt, hdr.a.kind, meta.o, meta.io, hdr.ho, hdr.hio, meta.pr, meta.po, meta.inv);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 9w1;
        hdr.res.setValid();
        hdr.res.o = meta.o; hdr.res.io = meta.io;
        hdr.res.px = meta.pr.x; hdr.res.py = meta.pr.y; hdr.res.qx = meta.po.x; hdr.res.qy = meta.po.y;
        hdr.res.hov = hdr.ho.isValid() ? 8w1 : 8w0; hdr.res.ho = hdr.ho.v;
        hdr.res.hiov = hdr.hio.isValid() ? 8w1 : 8w0; hdr.res.hio = hdr.hio.v;
        hdr.res.inv = meta.inv;
        if (sm.parser_error == error.NoError) { hdr.res.err = 0; }
        else if (sm.parser_error == error.PacketTooShort) { hdr.res.err = 2; }
        else if (sm.parser_error == error.HeaderTooShort) { hdr.res.err = 3; }
        else { hdr.res.err = 4; }
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.a); pkt.emit(hdr.res); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
