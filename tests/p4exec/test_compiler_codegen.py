"""Semantics of p4exec's generated code: real packets through real compiled P4 (v1model, BMv2 behaviour)."""
from __future__ import annotations

import pytest

from p4exec.compiler.program import compile_source
from p4exec.errors import P4Error
from p4exec.runtime import ActionCall, CloneSession, Exact, TableEntry
from p4exec.runtime.p4info_ids import Prefix, id_for
from tests.p4exec.p4prog import harness, program, run

PKT = bytes([0x10, 0x20, 0x30, 0x40])


def test_unsigned_wrap_saturation_and_signed_arithmetic() -> None:
    out = run("""
        hdr.h.a = hdr.h.a - 8w0x11;          // 0x10 - 0x11 wraps to 0xff
        hdr.h.b = hdr.h.b |+| 8w0xF0;        // saturates at 0xff
        hdr.h.c = hdr.h.c |-| 8w0x40;        // saturates at 0
        int<8> s = (int<8>)hdr.h.d;          // 0x40 = 64
        s = s + 8s100;                       // 164 wraps to -92
        hdr.h.d = (bit<8>)(s >> 1);          // arithmetic shift: -46 = 0xd2
    """, PKT)
    assert out == [(1, bytes([0xFF, 0xFF, 0x00, 0xD2]))]


def test_slices_concat_casts_and_shifts() -> None:
    out = run("""
        bit<16> w = hdr.h.a ++ hdr.h.b;      // 0x1020
        hdr.h.a = w[11:4];                   // 0x02
        hdr.h.b[3:0] = 4w0xF;                // 0x2f
        hdr.h.c = (bit<8>)(w << 20);         // shifted out: 0
        hdr.h.d = (bit<8>)((bit<4>)hdr.h.d); // 0x40 -> 0x0
    """, PKT)
    assert out == [(1, bytes([0x02, 0x2F, 0x00, 0x00]))]


def test_parser_error_reaches_ingress_with_code() -> None:
    h = harness(decls="header t_t { bit<32> x; }", hdr_fields="t_t t;",
                parser="pkt.extract(hdr.t);",
                ingress="hdr.h.d = (bit<8>)(sm.parser_error == error.PacketTooShort ? 1w1 : 1w0);")
    # the second header needs 4 more bytes: PacketTooShort, ingress still runs, t stays invalid
    assert h.send(0, PKT) == [(1, PKT[:3] + b"\x01")]
    assert h.send(0, PKT + bytes(4)) == [(1, PKT[:3] + b"\x00" + bytes(4))]


def test_header_stack_next_last_and_overflow() -> None:
    h = harness(decls="header e_t { bit<8> v; }", hdr_fields="e_t[2] s;",
                meta_fields="bit<8> last_v; bit<8> last_i;",
                parser="pkt.extract(hdr.s.next); meta.last_v = hdr.s.last.v; meta.last_i = (bit<8>)hdr.s.lastIndex; "
                       "pkt.extract(hdr.s.next); meta.last_v = hdr.s.last.v; meta.last_i = (bit<8>)hdr.s.lastIndex; "
                       "pkt.extract(hdr.s.next);",
                ingress="hdr.h.a = meta.last_v; hdr.h.b = meta.last_i; "
                        "hdr.h.c = (bit<8>)(sm.parser_error == error.StackOutOfBounds ? 1w1 : 1w0); "
                        "hdr.s.pop_front(1);")
    out = h.send(0, PKT + b"\xAA\xBB\xCC")
    # two elements parsed, the third extract overflows; pop_front leaves one valid element (0xBB)
    assert out == [(1, bytes([0xBB, 0x01, 0x01, 0x40, 0xBB]) + b"\xCC")]


def test_lookahead_select_and_advance() -> None:
    h = harness(decls="header e_t { bit<8> v; }", hdr_fields="e_t e;",
                parser="transition select(pkt.lookahead<bit<8>>()) { 8w0xAA: skip; default: accept; } } "
                       "state skip { pkt.advance(8); pkt.extract(hdr.e);")
    assert h.send(0, PKT + b"\xAA\x05\x06") == [(1, PKT + b"\x05\x06")]
    assert h.send(0, PKT + b"\xAB\x05") == [(1, PKT + b"\xAB\x05")]


def test_tables_hit_miss_switch_and_default() -> None:
    h = harness(ingress_decls="""
        action set_b(bit<8> v) { hdr.h.b = v; }
        action drop() { mark_to_drop(sm); }
        table t { key = { hdr.h.a: exact; } actions = { set_b; drop; NoAction; } default_action = NoAction(); }
        table u { key = { hdr.h.a: exact; } actions = { NoAction; } }
    """, ingress="""
        switch (t.apply().action_run) {
            set_b: { hdr.h.c = 1; }
            NoAction: { hdr.h.c = 2; }
        }
        if (u.apply().hit) { hdr.h.d = 9; }     // a second table: BMv2 cannot apply t twice
    """)
    h.table_add("MyIngress.t", {"hdr.h.a": 0x10}, "MyIngress.set_b", {"v": 0x77})
    h.table_add("MyIngress.u", {"hdr.h.a": 0x10}, "NoAction")
    h.table_add("MyIngress.t", {"hdr.h.a": 0x11}, "MyIngress.drop")
    assert h.send(0, PKT) == [(1, bytes([0x10, 0x77, 0x01, 0x09]))]
    assert h.send(0, bytes([0x12, 0, 0, 0])) == [(1, bytes([0x12, 0, 0x02, 0]))]
    assert h.send(0, bytes([0x11, 0, 0, 0])) == []
    h.set_default("MyIngress.t", "MyIngress.set_b", {"v": 5})
    assert h.send(0, bytes([0x12, 0, 0, 0])) == [(1, bytes([0x12, 5, 0x01, 0]))]


def test_const_entries_priorities_and_bound_action_args() -> None:
    h = harness(ingress_decls="""
        action put(out bit<8> f, bit<8> v) { f = v; }
        table t {
            key = { hdr.h.a: ternary; }
            actions = { put(hdr.h.b); }
            const entries = {
                0x10 &&& 0xF0 : put(hdr.h.b, 1);
                0x10 &&& 0xFF : put(hdr.h.b, 2);
                _ : put(hdr.h.b, 3);
            }
            default_action = put(hdr.h.b, 4);
        }
    """, ingress="t.apply();")
    assert h.send(0, PKT)[0][1][1] == 1          # first entry wins (highest priority)
    assert h.send(0, b"\x99\0\0\0")[0][1][1] == 3


def test_exit_in_subcontrol_ends_ingress() -> None:
    src_decl = """
control Sub(inout headers_t hdr) {
    apply { if (hdr.h.a == 1) { exit; } hdr.h.b = 7; }
}
"""
    from tests.p4exec.p4prog import TEMPLATE, Harness
    text = TEMPLATE.format(ingress="sub.apply(hdr); hdr.h.c = 9;", ingress_decls="Sub() sub;", decls="",
                           hdr_fields="", meta_fields="", parser="", egress="", egress_decls="", parser_decls="")
    text = text.replace("parser MyParser", src_decl.replace("headers_t", "headers_t") + "\nparser MyParser")
    # Sub uses headers_t, declared before the parser: move it after the struct
    h = Harness.from_source(text, "sub.p4")
    assert h.send(0, b"\x01\0\0\0") == [(1, b"\x01\0\0\0")]
    assert h.send(0, b"\x02\0\0\0") == [(1, b"\x02\x07\x09\0")]
    assert "MyIngress.sub" not in h.state.tables


def test_multicast_clone_and_instance_types() -> None:
    h = harness(ingress="""
        if (hdr.h.a == 1) { sm.mcast_grp = 5; }
        if (hdr.h.a == 2) { clone(CloneType.I2E, 32w7); }
    """, egress="hdr.h.c = (bit<8>)sm.egress_rid; hdr.h.d = (bit<8>)sm.instance_type;")
    pre = h.state.pre
    pre.insert_group(5, [(2, 11), (3, 12)])
    pre.set_session(CloneSession(7, ((4, 0),)))
    assert h.send(0, b"\x01\0\0\0") == [(2, b"\x01\0\x0b\x05"), (3, b"\x01\0\x0c\x05")]
    out = h.send(0, b"\x02\0\0\0")
    assert sorted(out) == [(1, b"\x02\0\0\0"), (4, b"\x02\0\0\x01")]


def test_resubmit_loop_is_capped_and_counted() -> None:
    h = harness(ingress="resubmit_preserving_field_list(0);")
    assert h.send(0, PKT) == []
    assert h.stats["resubmit_loop_dropped"] == 1


def test_recirculate_preserves_field_list() -> None:
    # recirculate is an egress operation on BMv2 (p4c-bm2-ss rejects it in ingress)
    h = harness(meta_fields="@field_list(1) bit<8> n;", ingress="""
        if (sm.instance_type == 0) { meta.n = 42; }
        else { hdr.h.d = meta.n; }
    """, egress="if (sm.instance_type == 0) { recirculate_preserving_field_list(1); }")
    assert h.send(0, PKT) == [(1, PKT[:3] + bytes([42]))]


def test_registers_counters_digest_and_random() -> None:
    h = harness(decls="struct d_t { bit<8> a; bit<16> w; }", ingress_decls="""
        register<bit<8>>(4) r;
        counter(4, CounterType.packets_and_bytes) c;
    """, ingress="""
        bit<8> old;
        r.read(old, 2);
        r.write(2, old + hdr.h.a);
        c.count(1);
        digest<d_t>(1, { hdr.h.a, 16w9 });
        random(hdr.h.d, 8w5, 8w5);
        hdr.h.b = old;
    """)
    h.send(0, PKT)
    out = h.send(0, PKT)
    assert out == [(1, bytes([0x10, 0x10, 0x30, 0x05]))]
    assert h.register_read("MyIngress.r", 2) == 0x20
    assert h.counter_read("c", 1) == (2, 8)
    assert h.state.digests["d_t"].drain() == [(0x10, 9), (0x10, 9)]


def test_digest_of_error_and_enum_values() -> None:
    """p4c-bm2-ss sends an error (its code) and a plain enum (its member's index) as 32-bit fields of a digest;
    P4Info names their types (checked against p4c in the reference test's programs)."""
    h = harness(decls="enum colour_t { RED, GREEN, BLUE } struct d_t { error e; colour_t c; bit<8> a; }",
                ingress="""
        d_t d;
        d.e = error.NoMatch;
        d.c = colour_t.BLUE;
        d.a = hdr.h.a;
        digest<d_t>(1, d);
        log_msg("e={} c={}", { d.e, d.c });
    """)
    h.send(0, PKT)
    assert h.state.digests["d_t"].drain() == [(2, 2, 0x10)]


def test_digest_of_a_list_is_named_as_p4c_names_it() -> None:
    """`digest(1, { ... })` has no struct type: p4c calls it digest_0, digest_1, ... and P4Info gives a tuple
    of the fields' types (p4c-bm2-ss 1.2.4.17's P4Info agreed on such a program)."""
    h = harness(ingress="digest(1, { hdr.h.a }); digest(2, { hdr.h.b, hdr.h.c });")
    h.send(0, PKT)
    assert h.state.digests["digest_0"].drain() == [(0x10,)]
    assert h.state.digests["digest_1"].drain() == [(0x20, 0x30)]
    p = compile_source(program(ingress="digest(1, { hdr.h.a }); digest(2, { hdr.h.b, hdr.h.c });"), "d.p4").p4info
    assert [d.preamble.name for d in p.digests] == ["digest_0", "digest_1"]
    assert [len(d.type_spec.tuple.members) for d in p.digests] == [1, 2]
    assert p.digests[1].type_spec.tuple.members[0].bitstring.bit.bitwidth == 8


def test_control_typed_constructor_parameter_shares_one_instance() -> None:
    """A control-typed constructor parameter takes an instance declared before; two users apply that one
    instance (its counter counts both), as p4c does (its own sample issue1566-bmv2 agrees in P4Info)."""
    decls = """
control step_t(inout bit<8> x);
control Inc(inout bit<8> x) {
    counter(32w4, CounterType.packets) hits;
    apply { x = x + 1; hits.count(0); }
}
control Twice(inout bit<8> x)(step_t s) {
    apply { s.apply(x); s.apply(x); }
}
control Shift(inout bit<8> x)(step_t s) {
    apply { x = x << 1; s.apply(x); }
}
"""
    h = harness(decls=decls, ingress_decls="Inc() inc; Twice(inc) twice; Shift(inc) shift;",
                ingress="twice.apply(hdr.h.a); shift.apply(hdr.h.b);")
    out = h.send(0, PKT)
    assert out == [(1, bytes([0x12, 0x41, 0x30, 0x40]))]
    assert h.counter_read("MyIngress.inc.hits", 0)[0] == 3


def test_functions_and_enums() -> None:
    h = harness(decls="""
enum bit<8> Kind { A = 1, B = 2 }
bit<8> twice(in bit<8> x) { return x + x; }
""", ingress="hdr.h.a = twice(hdr.h.a); if ((Kind)hdr.h.b == Kind.B) { hdr.h.c = (bit<8>)Kind.A; }")
    assert h.send(0, b"\x03\x02\0\0") == [(1, b"\x06\x02\x01\0")]


def test_p4info_names_and_ids_follow_p4c() -> None:
    h = harness(ingress_decls="""
        @name("renamed") action a(bit<8> v) { hdr.h.a = v; }
        @name(".global_t") table t { key = { hdr.h.a: exact @name("key_a"); } actions = { a; } }
        counter(4, CounterType.packets) ctr;
    """, ingress="t.apply();")
    p = h.p4info
    tables = {t.preamble.name: t for t in p.tables}
    actions = {a.preamble.name: a for a in p.actions}
    assert set(tables) == {"global_t"}
    # no default_action: p4c adds `@defaultonly NoAction` to the table (and so to the actions)
    assert set(actions) == {"MyIngress.renamed", "NoAction"}
    assert [r.scope for r in tables["global_t"].action_refs] == [0, 2]
    assert tables["global_t"].preamble.id == id_for(Prefix.TABLE, "global_t")
    assert actions["MyIngress.renamed"].preamble.id == id_for(Prefix.ACTION, "MyIngress.renamed")
    mf = tables["global_t"].match_fields[0]
    assert (mf.name, mf.bitwidth) == ("key_a", 8)
    assert p.counters[0].preamble.name == "MyIngress.ctr" and p.counters[0].size == 4
    assert tables["global_t"].action_refs[0].id == actions["MyIngress.renamed"].preamble.id


def test_indirect_table_entry_through_runtime() -> None:
    h = harness(ingress_decls="""
        action set_port(bit<9> p) { sm.egress_spec = p; }
        action_profile(8) ap;
        table t { key = { hdr.h.a: exact; } actions = { set_port; } implementation = ap; }
    """, ingress="t.apply();")
    prof = h.state.action_profiles["MyIngress.ap"]
    prof.insert_member(1, ActionCall("MyIngress.set_port", (6,)))
    h.state.tables["MyIngress.t"].insert(TableEntry(match=(Exact(0x10),), member_id=1))
    assert h.send(0, PKT) == [(6, PKT)]


def test_header_union_extract_and_validity() -> None:
    h = harness(decls="header u8_t { bit<8> v; } header u16_t { bit<16> v; } "
                      "header_union u_t { u8_t short; u16_t long; }",
                hdr_fields="u_t u;",
                parser="transition select(hdr.h.a) { 1: p8; default: p16; } } "
                       "state p8 { pkt.extract(hdr.u.short); transition accept; } "
                       "state p16 { pkt.extract(hdr.u.long);",
                ingress="hdr.h.b = (bit<8>)(hdr.u.isValid() ? 1w1 : 1w0); "
                        "hdr.h.c = (bit<8>)(hdr.u.long.isValid() ? 1w1 : 1w0);")
    assert h.send(0, b"\x01\0\0\0\x55\x66") == [(1, b"\x01\x01\x00\x00\x55\x66")]
    assert h.send(0, b"\x02\0\0\0\x55\x66") == [(1, b"\x02\x01\x01\x00\x55\x66")]


def test_parser_value_set_members_from_the_control_plane() -> None:
    from p4exec.runtime import Exact as Ex

    h = harness(decls="header e_t { bit<8> v; }", hdr_fields="e_t e;", parser_decls="value_set<bit<8>>(4) pvs;",
                parser="transition select(hdr.h.a) { pvs: more; default: accept; } } "
                       "state more { pkt.extract(hdr.e);",
                ingress="if (hdr.e.isValid()) { hdr.h.d = 1; }")
    h.program.p4info  # noqa: B018 - built
    text = h.program.pysource
    assert "VS_MyParser_pvs" in text
    vs = h.state.value_sets["MyParser.pvs"]
    assert h.send(0, b"\x07\0\0\0\x99") == [(1, b"\x07\0\0\0\x99")]
    vs.set_members([(Ex(7),)])
    assert h.send(0, b"\x07\0\0\0\x99") == [(1, b"\x07\0\0\x01\x99")]
    vsi = h.p4info.value_sets[0]
    assert (vsi.preamble.name, vsi.size, vsi.match[0].bitwidth) == ("MyParser.pvs", 4, 8)


def test_bool_header_fields_are_one_bit_on_the_wire() -> None:
    h = harness(decls="header f_t { bool up; bit<7> rest; }", hdr_fields="f_t f;", parser="pkt.extract(hdr.f);",
                ingress="if (hdr.f.up) { hdr.h.a = 1; } hdr.f.up = !hdr.f.up;")
    assert h.send(0, bytes(4) + b"\x85") == [(1, b"\x01\0\0\0\x05")]
    assert h.send(0, bytes(4) + b"\x05") == [(1, bytes(4) + b"\x85")]


def test_deprecated_resubmit_with_data_is_unknown_to_p4c_bm2_ss() -> None:
    """v1model.p4 declares resubmit(data), but p4c-bm2-ss 1.2.4.17 stops with "unknown extern function"."""
    with pytest.raises(P4Error, match="resubmit: unknown extern function"):
        harness(ingress="if (sm.instance_type == 0) { resubmit(meta); }")


def test_subcontrol_and_function_scalar_out_params_copy_back() -> None:
    from tests.p4exec.p4prog import TEMPLATE, Harness
    sub = """
control Inc(inout bit<8> v, in bit<8> by, out bit<8> old) {
    bit<8> seen = 0;
    action bump() { old = v; v = v + by; seen = seen + 1; }
    apply { bump(); bump(); }
}
void split(in bit<16> w, out bit<8> hi, out bit<8> lo) { hi = w[15:8]; lo = w[7:0]; }
"""
    text = TEMPLATE.format(ingress="inc.apply(hdr.h.a, hdr.h.b, hdr.h.c); split(16w0xABCD, hdr.h.d, meta.m);",
                           ingress_decls="Inc() inc;", decls="", hdr_fields="", meta_fields="", parser="",
                           egress="", egress_decls="", parser_decls="")
    text = text.replace("parser MyParser", sub + "\nparser MyParser")
    h = Harness.from_source(text, "inc.p4")
    assert h.send(0, bytes([1, 2, 0, 0])) == [(1, bytes([5, 2, 3, 0xAB]))]


def test_control_constructor_parameters_are_compile_time_constants() -> None:
    from tests.p4exec.p4prog import TEMPLATE, Harness
    sub = """
control AddK(inout bit<8> v)(bit<8> k, bit<32> cells) {
    register<bit<8>>(cells) r;
    apply { v = v + k; r.write(cells - 1, v); }
}
"""
    text = TEMPLATE.format(ingress="add3.apply(hdr.h.a); add5.apply(hdr.h.b);",
                           ingress_decls="AddK(3, 4) add3; AddK(k = 5, cells = 2) add5;", decls="", hdr_fields="",
                           meta_fields="", parser="", egress="", egress_decls="", parser_decls="")
    h = Harness.from_source(text.replace("parser MyParser", sub + "\nparser MyParser"), "ctor.p4")
    assert h.send(0, bytes(4)) == [(1, bytes([3, 5, 0, 0]))]
    assert h.state.registers["MyIngress.add3.r"].size == 4
    assert h.register_read("MyIngress.add5.r", 1) == 5


def test_sub_parser_instances() -> None:
    from tests.p4exec.p4prog import TEMPLATE, Harness
    sub = """
header e_t { bit<8> v; }
parser Tail(packet_in p, out e_t e)(bit<8> magic) {
    state start { p.extract(e); transition select(e.v) { magic: accept; default: reject; } }
}
"""
    text = TEMPLATE.format(ingress="hdr.h.d = (bit<8>)(hdr.e.isValid() ? 1w1 : 1w0);", ingress_decls="",
                           decls="", hdr_fields="e_t e;", meta_fields="", parser="tail.apply(pkt, hdr.e);",
                           egress="", egress_decls="", parser_decls="Tail(8w0x42) tail;")
    text = text.replace("struct headers_t", sub + "\nstruct headers_t")
    h = Harness.from_source(text, "sub.p4")
    assert h.send(0, bytes(4) + b"\x42\x99") == [(1, b"\0\0\0\x01\x42\x99")]
    assert h.send(0, bytes(4) + b"\x41") == [(1, b"\0\0\0\x01\x41")]   # reject: headers so far stay
    assert h.send(0, bytes(4)) == [(1, bytes(4))]                       # too short: e invalid


def test_long_else_if_chains_compile() -> None:
    chain = " else ".join(f"if (hdr.h.a == {i}) {{ hdr.h.b = {i}; }}" for i in range(150))
    h = harness(ingress=chain)
    assert h.send(0, bytes([149, 0, 0, 0])) == [(1, bytes([149, 149, 0, 0]))]


def test_action_named_like_the_extern_function_it_calls() -> None:
    """`action hash() { hash(...); }`: the call has five arguments, so it is v1model's hash (p4c resolves by
    name and argument count), not a recursive call of the action."""
    h = harness(ingress_decls="action hash() { hash(hdr.h.d, HashAlgorithm.identity, 8w0, { hdr.h.a }, 16w256); }",
                ingress="hash();")
    assert h.send(0, PKT) == [(1, bytes([0x10, 0x20, 0x30, 0x10]))]


def test_extract_into_dont_care_skips_the_header() -> None:
    """`pkt.extract<h_t>(_)` skips an h_t-sized header (p4c extracts it into a temporary nobody reads); a packet
    too short for it is PacketTooShort, as an extract would be."""
    h = harness(parser="pkt.extract<h_t>(_);",
                ingress="if (sm.parser_error == error.PacketTooShort) { hdr.h.d = 0xEE; }")
    assert h.send(0, PKT + bytes([1, 2, 3, 4, 5])) == [(1, PKT + bytes([5]))]
    assert h.send(0, PKT + bytes([1, 2])) == [(1, PKT[:3] + bytes([0xEE, 1, 2]))]
