// header-union stacks: extract into a member of `.next` advances the stack; isValid of elements and members
#include <core.p4>
#include <v1model.p4>

header tag_t {
    bit<4> kind;
    bit<4> more;
}
header short_t {
    bit<4>  kind;
    bit<4>  more;
    bit<8>  v;
}
header long_t {
    bit<4>  kind;
    bit<4>  more;
    bit<16> v;
}
header_union opt_t {
    short_t s;
    long_t  l;
}
header res_t {
    bit<8> count;
    bit<8> kinds;
    bit<8> sum;
}
struct headers_t {
    res_t    res;
    opt_t[3] opts;
}
struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    bit<4> more = 4w0;      // the current option's `more`, seen by lookahead before its extract
    state start {
        pkt.extract(hdr.res);
        transition next_opt;
    }
    state next_opt {
        tag_t t = pkt.lookahead<tag_t>();
        more = t.more;
        transition select(t.kind) {
            4w1: short_opt;
            4w2: long_opt;
            default: accept;
        }
    }
    state short_opt {
        pkt.extract(hdr.opts.next.s);
        hdr.res.count = (bit<8>)hdr.opts.lastIndex + 1;     // lastIndex exists only in parsers
        transition select(more) {
            4w1: next_opt;
            default: accept;
        }
    }
    state long_opt {
        pkt.extract(hdr.opts.next.l);
        hdr.res.count = (bit<8>)hdr.opts.lastIndex + 1;     // lastIndex exists only in parsers
        transition select(more) {
            4w1: next_opt;
            default: accept;
        }
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        bit<8> kinds = 0;
        bit<8> sum = 0;
        if (hdr.opts[0].s.isValid()) { kinds = kinds | 8w0x01; sum = sum + hdr.opts[0].s.v; }
        if (hdr.opts[0].l.isValid()) { kinds = kinds | 8w0x02; sum = sum + hdr.opts[0].l.v[7:0]; }
        if (hdr.opts[1].s.isValid()) { kinds = kinds | 8w0x04; sum = sum + hdr.opts[1].s.v; }
        if (hdr.opts[1].l.isValid()) { kinds = kinds | 8w0x08; sum = sum + hdr.opts[1].l.v[7:0]; }
        // members, not the element: BMv2 cannot load p4c-bm2-ss 1.2.4.17's JSON for a union stack element's
        // isValid() (nor for `opts.last.s.more` in a select, hence the lookahead's `more` above)
        if (hdr.opts[2].s.isValid() || hdr.opts[2].l.isValid()) { kinds = kinds | 8w0x10; }
        hdr.res.kinds = kinds;
        hdr.res.sum = sum;
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
