"""P4Info from p4exec's compiler: p4c's names and ids, so one P4Info serves p4exec and BMv2."""
from __future__ import annotations

from pathlib import Path

from p4.config.v1 import p4info_pb2

from p4exec.compiler.program import compile_file, compile_source
from tests.p4exec.p4prog import harness, program

DATA = Path(__file__).parent / "data"


def test_ids_equal_the_ones_p4c_gave_the_tutorial_program() -> None:
    """tests/p4exec/data/basic_l3.p4 has the object names of p4lang's tutorial basic.p4, whose P4Info (made by
    p4c) is public: these ids are facts from it."""
    p = compile_file(str(DATA / "basic_l3.p4")).p4info
    ids = {o.preamble.name: o.preamble.id for o in [*p.tables, *p.actions]}
    assert ids == {"MyIngress.ipv4_lpm": 37375156, "MyIngress.ipv4_forward": 28792405,
                   "MyIngress.drop": 25652968, "NoAction": 21257015}
    t = p.tables[0]
    assert t.preamble.alias == "ipv4_lpm" and t.size == 1024
    mf = t.match_fields[0]
    assert (mf.id, mf.name, mf.bitwidth, mf.match_type) == (1, "hdr.ipv4.dstAddr", 32, p4info_pb2.MatchField.LPM)
    fwd = next(a for a in p.actions if a.preamble.name == "MyIngress.ipv4_forward")
    assert [(q.id, q.name, q.bitwidth) for q in fwd.params] == [(1, "dstAddr", 48), (2, "port", 9)]
    assert t.initial_default_action.action_id == 25652968
    assert not t.const_default_action_id


def test_externs_digests_and_controller_headers() -> None:
    h = harness(decls="""
@controller_header("packet_in") header pin_t { bit<9> ingress_port; bit<7> pad; }
struct learn_t { bit<8> a; bit<16> b; }
""", hdr_fields="pin_t pin;", meta_fields="bit<2> colour;", ingress_decls="""
    action fwd(bit<9> port) { sm.egress_spec = port; }
    direct_counter(CounterType.packets_and_bytes) dc;
    direct_meter<bit<2>>(MeterType.bytes) dm;
    action fwd_metered(bit<9> port) { sm.egress_spec = port; dm.read(meta.colour); }
    table t { key = { hdr.h.a: exact; hdr.h.b: ternary; } actions = { fwd_metered; @defaultonly NoAction; }
              counters = dc; meters = dm; const default_action = NoAction(); }
    action_selector(HashAlgorithm.crc16, 32w64, 32w14) sel;
    table e { key = { hdr.h.a: exact; hdr.h.c: selector; } actions = { fwd; } implementation = sel; }
    register<bit<48>>(16) r;
    meter(8, MeterType.packets) m;
""", ingress="t.apply(); e.apply(); digest<learn_t>(1, { hdr.h.a, 16w0 });")
    p = h.p4info
    t = next(x for x in p.tables if x.preamble.name == "MyIngress.t")
    assert [m.match_type for m in t.match_fields] == [p4info_pb2.MatchField.EXACT, p4info_pb2.MatchField.TERNARY]
    assert t.const_default_action_id == next(a.preamble.id for a in p.actions if a.preamble.name == "NoAction")
    assert [r.scope for r in t.action_refs] == [0, 2]
    assert sorted(t.direct_resource_ids) == sorted([p.direct_counters[0].preamble.id, p.direct_meters[0].preamble.id])
    assert p.direct_counters[0].direct_table_id == t.preamble.id
    assert p.direct_counters[0].spec.unit == p4info_pb2.CounterSpec.BOTH
    assert p.direct_meters[0].spec.unit == p4info_pb2.MeterSpec.BYTES
    e = next(x for x in p.tables if x.preamble.name == "MyIngress.e")
    assert [m.name for m in e.match_fields] == ["hdr.h.a"]          # selector fields are not in P4Info
    prof = p.action_profiles[0]
    assert prof.preamble.name == "MyIngress.sel" and prof.with_selector and prof.size == 64
    assert e.implementation_id == prof.preamble.id and list(prof.table_ids) == [e.preamble.id]
    assert (p.registers[0].preamble.name, p.registers[0].size) == ("MyIngress.r", 16)
    assert p.registers[0].type_spec.bitstring.bit.bitwidth == 48
    assert p.meters[0].spec.unit == p4info_pb2.MeterSpec.PACKETS and p.meters[0].size == 8
    d = p.digests[0]
    assert d.preamble.name == "learn_t" and d.type_spec.struct.name == "learn_t"
    members = p.type_info.structs["learn_t"].members
    assert [(m.name, m.type_spec.bitstring.bit.bitwidth) for m in members] == [("a", 8), ("b", 16)]
    cpm = p.controller_packet_metadata[0]
    assert cpm.preamble.name == "packet_in"
    assert [(m.id, m.name, m.bitwidth) for m in cpm.metadata] == [(1, "ingress_port", 9), (2, "pad", 7)]
    # the runtime state built from this P4Info runs the program
    assert h.send(0, bytes(4)) == [(1, bytes(4))]


def test_p4c_implicit_default_direct_actions_and_valid_keys() -> None:
    """What p4c's frontend does before writing P4Info: a table without default_action gets `@defaultonly
    NoAction` (scope DEFAULT_ONLY, initial default NoAction), actions called from an apply block are listed,
    an `isValid()` key is named `<header>.$valid$`, @defaultonly/@tableonly stay as action-ref annotations."""
    h = harness(ingress_decls="""
    action punt() { sm.egress_spec = 9w64; }
    action fwd(bit<9> port) { sm.egress_spec = port; }
    @hidden action quiet() { hdr.h.d = 0; }
    table t { key = { hdr.h.isValid(): exact; hdr.h.a: exact; } actions = { @tableonly fwd; } }
    table u { key = { hdr.h.b: exact; } actions = { fwd; NoAction; } }
""", ingress="t.apply(); u.apply(); if (hdr.h.c == 0) { punt(); quiet(); }")
    p = h.p4info
    actions = {a.preamble.name: a.preamble.id for a in p.actions}
    assert set(actions) == {"MyIngress.punt", "MyIngress.fwd", "NoAction"}
    t = next(x for x in p.tables if x.preamble.name == "MyIngress.t")
    assert [m.name for m in t.match_fields] == ["hdr.h.$valid$", "hdr.h.a"]
    refs = [(r.id, r.scope, list(r.annotations)) for r in t.action_refs]
    assert refs == [(actions["MyIngress.fwd"], p4info_pb2.ActionRef.TABLE_ONLY, ["@tableonly"]),
                    (actions["NoAction"], p4info_pb2.ActionRef.DEFAULT_ONLY, ["@defaultonly"])]
    assert t.initial_default_action.action_id == actions["NoAction"] and not t.const_default_action_id
    u = next(x for x in p.tables if x.preamble.name == "MyIngress.u")
    assert [(r.id, r.scope) for r in u.action_refs] == [(actions["MyIngress.fwd"], 0), (actions["NoAction"], 0)]
    assert u.initial_default_action.action_id == actions["NoAction"]
    noaction = next(a for a in p.actions if a.preamble.name == "NoAction")
    assert list(noaction.preamble.annotations) == ['@noWarn("unused")']
    # the implicit default runs on a miss; the control plane may set it, but not insert entries with it
    assert h.send(0, bytes([1, 2, 1, 4])) == [(1, bytes([1, 2, 1, 4]))]


def test_type_declarations_and_serializable_enums_in_type_info() -> None:
    """`type` declarations are named (type_name, type_info.new_types), typedefs are not; a serializable enum in
    a digest is a serializable_enum with its members in type_info, as p4c writes them."""
    h = harness(decls="""
type bit<9> port_t;
typedef bit<8> byte_t;
enum bit<8> colour_t { RED = 1, BLUE = 0xF0 }
struct learn_t { colour_t c; port_t p; byte_t b; }
""", meta_fields="port_t port;", ingress_decls="""
    action to(port_t p, byte_t v) { meta.port = p; hdr.h.b = v; }
    table t { key = { meta.port: exact; hdr.h.a: exact; } actions = { to; } }
""", ingress="t.apply(); digest<learn_t>(1, { colour_t.BLUE, meta.port, hdr.h.c });")
    p = h.p4info
    t = next(x for x in p.tables if x.preamble.name == "MyIngress.t")
    assert [(m.name, m.type_name.name) for m in t.match_fields] == [("meta.port", "port_t"), ("hdr.h.a", "")]
    to = next(a for a in p.actions if a.preamble.name == "MyIngress.to")
    assert [(q.name, q.bitwidth, q.type_name.name) for q in to.params] == [("p", 9, "port_t"), ("v", 8, "")]
    assert p.type_info.new_types["port_t"].original_type.bitstring.bit.bitwidth == 9
    members = p.type_info.structs["learn_t"].members
    assert members[0].type_spec.serializable_enum.name == "colour_t"
    assert members[1].type_spec.new_type.name == "port_t"
    assert members[2].type_spec.bitstring.bit.bitwidth == 8
    enum = p.type_info.serializable_enums["colour_t"]
    assert enum.underlying_type.bitwidth == 8
    assert [(m.name, m.value) for m in enum.members] == [("RED", b"\x01"), ("BLUE", b"\xf0")]


def test_controller_header_field_name_annotation() -> None:
    """@name on a @controller_header field renames its packet metadata (its control-plane name)."""
    h = harness(decls='@controller_header("packet_in") header pin_t { @name("port") bit<9> ingress_port; '
                      'bit<7> pad; }', hdr_fields="pin_t pin;")
    cpm = h.p4info.controller_packet_metadata[0]
    assert [(m.id, m.name) for m in cpm.metadata] == [(1, "port"), (2, "pad")]


def test_objects_come_in_p4c_order() -> None:
    """tests/p4/87_p4info_order.p4: the order p4c-bm2-ss 1.2.4.17 wrote for it (measured; the reference test
    compares it again where p4c is installed): V1Switch block order, sub-control objects at their instance,
    used global actions first in a block, then its local actions by declaration, top-level externs first."""
    p = compile_file(str(Path(__file__).parents[1] / "p4" / "87_p4info_order.p4")).p4info

    def names(objs) -> list[str]:
        return [o.preamble.name for o in objs]

    assert names(p.tables) == ["MyIngress.i_t2", "MyIngress.sub_z.s_t", "MyIngress.i_t1", "MyIngress.sub_a.s_t",
                               "MyIngress.i_t0", "MyEgress.e_t"]
    assert names(p.actions) == ["NoAction", "g_act_a", "g_act_z", "MyIngress.i_z", "MyIngress.i_y",
                                "MyIngress.sub_z.s_z", "MyIngress.sub_z.s_a", "MyIngress.sub_a.s_z",
                                "MyIngress.sub_a.s_a", "MyIngress.i_a", "MyEgress.e_z"]
    assert names(p.counters) == ["MyIngress.i_cnt_z", "MyIngress.sub_z.s_cnt", "MyIngress.sub_a.s_cnt",
                                 "MyIngress.i_cnt_a", "MyEgress.e_cnt"]
    assert names(p.value_sets) == ["MyParser.pvs_z", "MyParser.pvs_a"]
    assert names(p.registers) == ["g_reg_z", "g_reg_a"]


def test_names_of_inlined_actions_renamed_blocks_and_non_ascii() -> None:
    """tests/p4exec/data/p4info_names.p4 (P4Info equal to p4c-bm2-ss 1.2.4.17's, checked when it was written):
    `helper`, only called from `caller`, is inlined and absent; the ingress keeps its declaration's name; the
    table's UTF-8 name is not encoded twice."""
    p = compile_file(str(DATA / "p4info_names.p4")).p4info
    actions = {a.preamble.name for a in p.actions}
    assert "MyIngress.caller" in actions and "MyIngress.helper" not in actions
    tables = {t.preamble.name for t in p.tables}
    assert tables == {"MyIngress.sub.t", "MyIngress.tablé"}
    assert "MyIngress.señal" in actions


def test_dead_tables_and_their_direct_counters_are_left_out() -> None:
    """p4c's mid-end removes a table only a constant-false branch applies (or a `false ?` arm), and a direct
    counter no remaining table uses; registers and counters stay even unused (p4c-bm2-ss 1.2.4.17 agreed on
    this program's P4Info)."""
    p = compile_source(program(ingress_decls="""
        action set(bit<8> v) { hdr.h.b = v; }
        direct_counter(CounterType.packets) dead_dc;
        direct_counter(CounterType.packets) lonely_dc;
        table dead_t { key = { hdr.h.a: exact; } actions = { set; NoAction; } counters = dead_dc; }
        table mux_t { key = { hdr.h.a: exact; } actions = { set; NoAction; } }
        table live_t { key = { hdr.h.a: exact; } actions = { set; NoAction; } }
        register<bit<8>>(4) unused_reg;
    """, ingress="""
        if (false) { dead_t.apply(); }
        bool h = false ? mux_t.apply().hit : true;
        if (h) { live_t.apply(); }
    """), "dead.p4").p4info
    assert [t.preamble.name for t in p.tables] == ["MyIngress.live_t"]
    assert not p.direct_counters
    assert [r.preamble.name for r in p.registers] == ["MyIngress.unused_reg"]


def test_controller_header_struct_field_is_flattened() -> None:
    """A struct-typed field of a @controller_header header is listed member by member (`b.b`, `b.c`), as p4c
    writes it (p4c-bm2-ss 1.2.4.17 agreed on this program); the widths add up to the same bytes."""
    p = compile_source(program(decls="""
        struct inner_t { bit<8> b; bit<8> c; }
        @controller_header("packet_in") header pin_t { bit<16> port; inner_t b; }
    """, hdr_fields="pin_t pin;", ingress="hdr.pin.setValid(); hdr.pin.b.b = hdr.h.a;"), "cpu.p4").p4info
    md = p.controller_packet_metadata[0].metadata
    assert [(m.id, m.name, m.bitwidth) for m in md] == [(1, "port", 16), (2, "b.b", 8), (3, "b.c", 8)]


def test_serializable_enum_key_and_param_types_are_in_type_info() -> None:
    """A table key or action parameter of a serializable enum type keeps its bit width, and the enum is listed in
    type_info.serializable_enums, as p4c writes it (p4c-bm2-ss 1.2.4.17 agreed on such a program)."""
    p = compile_source(program(decls="enum bit<8> kind_t { X = 1, Y = 2 } enum bit<8> mark_t { M = 3 }",
                               meta_fields="kind_t kind;", ingress_decls="""
        action set(mark_t v) { hdr.h.b = (bit<8>)v; }
        table t { key = { meta.kind: exact; } actions = { set; NoAction; } }
    """, ingress="t.apply();"), "se.p4").p4info
    assert set(p.type_info.serializable_enums) == {"kind_t", "mark_t"}
    assert p.tables[0].match_fields[0].bitwidth == 8 and not p.tables[0].match_fields[0].HasField("type_name")
    assert [(m.name, m.value) for m in p.type_info.serializable_enums["kind_t"].members] == [("X", b"\x01"),
                                                                                            ("Y", b"\x02")]


def test_action_parameter_name_annotation() -> None:
    """`action foo(@name("orange") bit<9> port)`: P4Info names the parameter `orange`, as p4c does."""
    p = compile_source(program(ingress_decls="""
        action foo(@name("orange") bit<9> port) { sm.egress_spec = port; }
        table t { key = { hdr.h.a: exact; } actions = { foo; NoAction; } }
    """, ingress="t.apply();"), "pn.p4").p4info
    foo = next(a for a in p.actions if a.preamble.name == "MyIngress.foo")
    assert [(q.id, q.name, q.bitwidth, list(q.annotations)) for q in foo.params] == [(1, "orange", 9, [])]
