"""Packet replication config and DeviceState construction / reset."""
from __future__ import annotations

import pytest

from p4exec.runtime import (
    ActionCall,
    CloneSession,
    Counter,
    DeviceState,
    Lpm,
    Register,
    RuntimeOpError,
    Table,
    TableEntry,
)


def code_of(fn, *a) -> str:
    with pytest.raises(RuntimeOpError) as ei:
        fn(*a)
    return ei.value.code


def test_multicast_groups(state):
    pre = state.pre
    pre.insert_group(1, [(1, 0), (2, 0), (2, 1)])
    assert pre.replicas(1) == ((1, 0), (2, 0), (2, 1))
    assert pre.replicas(7) == ()
    assert code_of(pre.insert_group, 1, [(3, 0)]) == "ALREADY_EXISTS"
    assert code_of(pre.insert_group, 2, [(3, 0), (3, 0)]) == "INVALID_ARGUMENT"
    assert code_of(pre.insert_group, 0, [(3, 0)]) == "INVALID_ARGUMENT"
    assert code_of(pre.modify_group, 9, [(3, 0)]) == "NOT_FOUND"
    assert code_of(pre.delete_group, 9) == "NOT_FOUND"
    pre.modify_group(1, [(4, 7)])
    assert pre.replicas(1) == ((4, 7),)
    pre.delete_group(1)
    assert pre.replicas(1) == ()


def test_bmv2_node_model(state):
    pre = state.pre
    pre.mgrp_create(5)
    n0 = pre.node_create(10, [3, 1])
    n1 = pre.node_create(11, [2])
    assert (n0, n1) == (0, 1)
    pre.node_associate(5, n1)
    pre.node_associate(5, n0)
    assert pre.replicas(5) == ((2, 11), (1, 10), (3, 10))
    pre.node_update(n0, [4])
    assert pre.replicas(5) == ((2, 11), (4, 10))
    assert code_of(pre.node_associate, 5, 9) == "NOT_FOUND"
    assert code_of(pre.node_associate, 6, n0) == "NOT_FOUND"


def test_clone_sessions(state):
    pre = state.pre
    pre.insert_session(CloneSession(5, ((3, 1),), class_of_service=2, packet_length_bytes=64))
    assert pre.clone_replicas(5) == ((3, 1),)
    assert pre.sessions[5].packet_length_bytes == 64 and pre.sessions[5].class_of_service == 2
    assert code_of(pre.insert_session, CloneSession(5)) == "ALREADY_EXISTS"
    assert code_of(pre.modify_session, CloneSession(6)) == "NOT_FOUND"
    assert code_of(pre.delete_session, 6) == "NOT_FOUND"
    assert code_of(pre.insert_session, CloneSession(7, class_of_service=8)) == "INVALID_ARGUMENT"
    assert code_of(pre.insert_session, CloneSession(0, ((1, 0),))) == "INVALID_ARGUMENT"  # 0 is reserved
    pre.set_session(CloneSession(0, ((1, 0),)))  # ... but BMv2's CLI (STF mirroring_add) may use it
    assert pre.clone_replicas(0) == ((1, 0),)
    pre.insert_group(2, [(1, 0), (2, 0)])
    pre.set_session(CloneSession(7, mgrp=2))  # BMv2 mirroring_add_mc
    assert pre.clone_replicas(7) == ((1, 0), (2, 0))
    assert pre.clone_replicas(99) == ()
    pre.reset()
    assert pre.clone_replicas(5) == () and pre.replicas(2) == ()


def test_from_p4info_by_name_and_id(state):
    assert isinstance(state.by_id[33554433], Table)
    assert state.by_id[33554433] is state.tables["MyIngress.ipv4_lpm"]
    assert isinstance(state.by_id[302000001], Counter)
    assert isinstance(state.by_id[369098753], Register)
    assert state.by_id[285212673] is state.action_profiles["MyIngress.ecmp_selector"]
    assert state.tables["MyIngress.ecmp"].profile is state.action_profiles["MyIngress.ecmp_selector"]
    assert state.action_profiles["MyIngress.ecmp_selector"].with_selector
    assert state.tables["MyIngress.consts"].is_const
    assert state.tables["MyIngress.acl"].needs_priority
    assert "learn_t" in state.digests
    assert state.action_call("MyIngress.ipv4_forward", {"port": 3, "dstAddr": 1}) == \
        ActionCall("MyIngress.ipv4_forward", (1, 3))
    assert code_of(state.action_call, "MyIngress.ipv4_forward", {"port": 3}) == "INVALID_ARGUMENT"


def test_state_reset(state):
    state.registers["MyIngress.reg"].write(1, 5)
    state.counters["MyIngress.port_counter"].count(1, 10)
    state.meters["MyIngress.port_meter"].set_config(0, 1, 1, 1, 1)
    state.pre.insert_group(1, [(1, 0)])
    p = state.action_profiles["MyIngress.ecmp_selector"]
    p.insert_member(1, ActionCall("MyIngress.drop"))
    state.tables["MyIngress.ipv4_lpm"].insert(TableEntry((Lpm(0, 1),), action=ActionCall("MyIngress.drop")))
    state.digests["learn_t"].emit((1, 2))
    state.reset()
    assert state.registers["MyIngress.reg"].read(1) == 0
    assert state.counters["MyIngress.port_counter"].read(1) == (0, 0)
    assert state.meters["MyIngress.port_meter"].get_config(0) is None
    assert state.pre.replicas(1) == () and p.members == {}
    assert len(state.tables["MyIngress.ipv4_lpm"]) == 0
    assert state.digests["learn_t"].drain() == []


def test_initial_default_action_from_p4info():
    from google.protobuf import text_format
    from p4.config.v1 import p4info_pb2

    from tests.support.rt_p4info import P4INFO_TXT
    txt = P4INFO_TXT.replace("const_default_action_id: 16777218", """initial_default_action {
    action_id: 16777217
    arguments { param_id: 1 value: "\\x00\\x00\\x00\\x00\\x00\\x01" }
    arguments { param_id: 2 value: "\\x00\\x07" } }""")
    s = DeviceState.from_p4info(text_format.Parse(txt, p4info_pb2.P4Info()))
    mac = s.tables["MyIngress.mac"]
    assert mac.default_action == ActionCall("MyIngress.ipv4_forward", (1, 7)) and not mac.const_default


def test_replica_limits_of_v1model(state):
    assert code_of(state.pre.insert_group, 1, [(512, 0)]) == "INVALID_ARGUMENT"
    assert code_of(state.pre.insert_group, 1, [(1, 1 << 16)]) == "INVALID_ARGUMENT"
    assert code_of(state.pre.insert_group, 1 << 16, [(1, 0)]) == "INVALID_ARGUMENT"
    assert state.pre.groups == {}


def test_value_set_members():
    from p4exec.runtime import Exact, KeyField, MatchKind, Ternary, ValueSet
    vs = ValueSet("trill_types", 0x03000001, 2, (KeyField("f", 1, 16, MatchKind.TERNARY),))
    vs.set_members([(Ternary(0x22F3, 0xFFFF),), (Ternary(0x8900, 0xFF00),)])
    assert vs.matches((0x22F3,)) and vs.matches((0x89AB,)) and not vs.matches((0x0800,))
    assert code_of(vs.set_members, [(Ternary(1, 0xFFFF),)] * 2) == "ALREADY_EXISTS"
    assert code_of(vs.set_members, [(Ternary(1, 0xFFFF),), (Ternary(2, 0xFFFF),), (Ternary(3, 0xFFFF),)]) == \
        "RESOURCE_EXHAUSTED"
    assert code_of(vs.set_members, [(Exact(1),)]) == "INVALID_ARGUMENT"
    assert vs.matches((0x22F3,))  # rejected writes changed nothing
    vs.set_members([])
    assert not vs.matches((0x22F3,))


def test_unsupported_match_type_is_reported_as_unimplemented():
    from google.protobuf import text_format
    from p4.config.v1 import p4info_pb2

    from tests.support.rt_p4info import P4INFO_TXT
    txt = P4INFO_TXT.replace('name: "meta.vrf" bitwidth: 8 match_type: EXACT }',
                             'name: "meta.vrf" bitwidth: 8 other_match_type: "dleft" }', 1)
    with pytest.raises(RuntimeOpError) as ei:
        DeviceState.from_p4info(text_format.Parse(txt, p4info_pb2.P4Info()))
    assert ei.value.code == "UNIMPLEMENTED"
    sel = P4INFO_TXT.replace('name: "meta.vrf" bitwidth: 8 match_type: EXACT }',
                             'name: "meta.vrf" bitwidth: 8 other_match_type: "selector" }', 1)
    s = DeviceState.from_p4info(text_format.Parse(sel, p4info_pb2.P4Info()))
    mac = s.tables["MyIngress.mac"]
    assert len(mac.fields) == 1 and mac.selector_fields == ((1, 8),)
