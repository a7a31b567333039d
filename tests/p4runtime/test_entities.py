"""Action profiles, counters, meters, registers, PRE, digests and the queue extension."""

from __future__ import annotations

import grpc
import pytest
from google.protobuf import struct_pb2
from google.rpc import code_pb2
from p4.v1 import p4data_pb2, p4runtime_pb2

from tests.support.p4rt_client import U, current_server, fail_code, update, write_errors
from tests.support.p4rt_fixture import (
    A_DROP,
    A_SET_NHOP,
    AP_SEL,
    C_PORT,
    D_LEARN,
    M_PORT,
    R_REG,
    T_ACL,
    T_ECMP,
    VS_PORTS,
    acl_entry,
)

Entity = p4runtime_pb2.Entity


def state():
    return current_server().service.ctx.program.state


def member(mid: int, port: int = 1, action: int = A_SET_NHOP):
    m = p4runtime_pb2.ActionProfileMember(action_profile_id=AP_SEL, member_id=mid)
    m.action.action_id = action
    if action == A_SET_NHOP:
        m.action.params.add(param_id=1, value=b"\x01")
        m.action.params.add(param_id=2, value=bytes([port]))
    return m


def group(gid: int, members: dict[int, int], max_size: int = 8):
    g = p4runtime_pb2.ActionProfileGroup(action_profile_id=AP_SEL, group_id=gid, max_size=max_size)
    for mid, w in members.items():
        g.members.add(member_id=mid, weight=w)
    return g


def ecmp_entry(nhop: int, group_id: int | None = None, member_id: int | None = None):
    e = p4runtime_pb2.TableEntry(table_id=T_ECMP)
    e.match.add(field_id=1).exact.value = bytes([nhop])
    if group_id is not None:
        e.action.action_profile_group_id = group_id
    if member_id is not None:
        e.action.action_profile_member_id = member_id
    return e


def test_members_groups_and_indirect_entries(primary):
    primary.write(*(update(U.INSERT, action_profile_member=member(i, port=i)) for i in (1, 2, 3)))
    primary.write(update(U.INSERT, action_profile_group=group(100, {1: 1, 2: 3})))
    primary.write(update(U.INSERT, table_entry=ecmp_entry(7, group_id=100)),
                  update(U.INSERT, table_entry=ecmp_entry(8, member_id=3)))
    members = primary.read(Entity(action_profile_member=p4runtime_pb2.ActionProfileMember()))
    assert sorted(e.action_profile_member.member_id for e in members) == [1, 2, 3]
    [g] = primary.read(Entity(action_profile_group=p4runtime_pb2.ActionProfileGroup(
        action_profile_id=AP_SEL)))
    assert {(m.member_id, m.weight) for m in g.action_profile_group.members} == {(1, 1), (2, 3)}
    assert g.action_profile_group.max_size == 8
    prof = state().action_profiles["MyIngress.ecmp_selector"]
    assert prof.groups[100].members == {1: 1, 2: 3}
    # modify a member's action: read back and the runtime sees it
    primary.write(update(U.MODIFY, action_profile_member=member(3, port=9)))
    assert prof.members[3].args == (1, 9)
    # lookups through the table resolve the member
    res = state().tables["MyIngress.ecmp"].lookup((8,), 64)
    assert res.hit and res.action.args == (1, 9)
    # referenced members/groups cannot go; errors leave everything in place
    codes = fail_code(primary, update(U.DELETE, action_profile_member=member(1)),
                      update(U.DELETE, action_profile_group=group(100, {})))
    assert codes == [code_pb2.FAILED_PRECONDITION, code_pb2.FAILED_PRECONDITION]
    primary.write(update(U.DELETE, table_entry=ecmp_entry(7)))
    primary.write(update(U.DELETE, action_profile_group=group(100, {})))
    primary.write(update(U.DELETE, action_profile_member=member(1)))
    assert 100 not in prof.groups and 1 not in prof.members


def test_group_errors(primary):
    primary.write(update(U.INSERT, action_profile_member=member(1)),
                  update(U.INSERT, action_profile_member=member(2)))
    codes = fail_code(
        primary,
        update(U.INSERT, action_profile_group=group(1, {1: 5, 2: 5})),   # weights 10 > 8
        update(U.INSERT, action_profile_group=group(2, {1: 1}, max_size=9)),  # > max_group_size
        update(U.INSERT, action_profile_group=group(3, {42: 1})),  # unknown member
        update(U.INSERT, action_profile_group=group(4, {1: 0})),  # weight 0
        update(U.INSERT, table_entry=ecmp_entry(1, group_id=77)),  # unknown group
        update(U.INSERT, action_profile_member=member(5, action=A_DROP)),  # not an action of ecmp
        update(U.INSERT, action_profile_member=member(1)),  # duplicate member
    )
    assert codes == [code_pb2.RESOURCE_EXHAUSTED, code_pb2.INVALID_ARGUMENT, code_pb2.NOT_FOUND,
                     code_pb2.INVALID_ARGUMENT, code_pb2.NOT_FOUND, code_pb2.INVALID_ARGUMENT,
                     code_pb2.ALREADY_EXISTS]
    assert primary.read(Entity(action_profile_group=p4runtime_pb2.ActionProfileGroup())) == []
    assert len(primary.read(Entity(action_profile_member=p4runtime_pb2.ActionProfileMember()))) == 2


def test_counters_read_write_and_index_errors(primary):
    e = p4runtime_pb2.CounterEntry(counter_id=C_PORT)
    e.index.index = 3
    e.data.byte_count, e.data.packet_count = 1500, 2
    primary.write(update(U.MODIFY, counter_entry=e))
    state().counters["MyIngress.port_counter"].count(3, 100)  # the data plane counts on
    everything = primary.read(Entity(counter_entry=p4runtime_pb2.CounterEntry(counter_id=C_PORT)))
    assert len(everything) == 8
    got = everything[3].counter_entry
    assert (got.index.index, got.data.packet_count, got.data.byte_count) == (3, 3, 1600)
    assert len(primary.read(Entity(counter_entry=p4runtime_pb2.CounterEntry()))) == 8  # all counters
    bad = p4runtime_pb2.CounterEntry(counter_id=C_PORT)
    bad.index.index = 8
    assert fail_code(primary, update(U.MODIFY, counter_entry=bad),
                     update(U.INSERT, counter_entry=e)) \
        == [code_pb2.OUT_OF_RANGE, code_pb2.INVALID_ARGUMENT]
    # a Read batch: good requests still answer, bad ones get one p4.Error each (UNKNOWN overall)
    req = p4runtime_pb2.ReadRequest(device_id=1, entities=[
        Entity(counter_entry=e), Entity(counter_entry=bad),
        Entity(counter_entry=p4runtime_pb2.CounterEntry(counter_id=0x12FFFFFF))])
    got = []
    with pytest.raises(grpc.RpcError) as exc:
        for resp in primary.stub.Read(req, timeout=5):
            got.extend(resp.entities)
    assert exc.value.code() == grpc.StatusCode.UNKNOWN
    assert [c for c, _ in write_errors(exc.value)] == [code_pb2.OK, code_pb2.OUT_OF_RANGE,
                                                       code_pb2.NOT_FOUND]
    assert [x.counter_entry.index.index for x in got] == [3]


def test_registers_read_and_write(primary):
    e = p4runtime_pb2.RegisterEntry(register_id=R_REG)
    e.index.index = 5
    e.data.CopyFrom(p4data_pb2.P4Data(bitstring=b"\x00\x00\x12\x34"))
    primary.write(update(U.MODIFY, register_entry=e))
    assert state().registers["MyIngress.reg"].read(5) == 0x1234
    req = p4runtime_pb2.RegisterEntry(register_id=R_REG)
    req.index.index = 5
    [got] = primary.read(Entity(register_entry=req))
    assert got.register_entry.data.bitstring == b"\x12\x34"
    assert len(primary.read(Entity(register_entry=p4runtime_pb2.RegisterEntry()))) == 16
    negative = p4runtime_pb2.RegisterEntry(register_id=R_REG)
    negative.index.index = -1
    negative.data.bitstring = b"\x01"
    assert fail_code(primary, update(U.MODIFY, register_entry=negative)) == [code_pb2.INVALID_ARGUMENT]
    too_big = p4runtime_pb2.RegisterEntry(register_id=R_REG)
    too_big.index.index = 5
    too_big.data.bitstring = b"\x01\x00\x00\x00\x00"
    assert fail_code(primary, update(U.MODIFY, register_entry=too_big)) == [code_pb2.OUT_OF_RANGE]
    assert state().registers["MyIngress.reg"].read(5) == 0x1234


def test_meters_and_direct_meters(primary):
    e = p4runtime_pb2.MeterEntry(meter_id=M_PORT)
    e.index.index = 1
    e.config.cir, e.config.cburst, e.config.pir, e.config.pburst = 1000, 100, 2000, 200
    primary.write(update(U.MODIFY, meter_entry=e))
    assert state().meters["MyIngress.port_meter"].get_config(1) is not None
    req = p4runtime_pb2.MeterEntry(meter_id=M_PORT)
    req.index.index = 1
    [got] = primary.read(Entity(meter_entry=req))
    assert got.meter_entry.config.pir == 2000
    bad = p4runtime_pb2.MeterEntry()
    bad.CopyFrom(e)
    bad.config.pir = 10  # PIR below CIR
    assert fail_code(primary, update(U.MODIFY, meter_entry=bad)) == [code_pb2.INVALID_ARGUMENT]
    [got] = primary.read(Entity(meter_entry=req))
    assert got.meter_entry.config.pir == 2000
    # direct meter on an ACL entry
    primary.write(update(U.INSERT, table_entry=acl_entry()))
    dme = p4runtime_pb2.DirectMeterEntry()
    dme.table_entry.CopyFrom(acl_entry())
    dme.table_entry.ClearField("action")
    dme.config.cir, dme.config.cburst, dme.config.pir, dme.config.pburst = 10, 1, 20, 2
    primary.write(update(U.MODIFY, direct_meter_entry=dme))
    [got] = primary.read(Entity(direct_meter_entry=p4runtime_pb2.DirectMeterEntry()))
    assert got.direct_meter_entry.config.pir == 20
    [rt] = state().tables["MyIngress.acl"].entries()
    assert rt.meter is not None and rt.meter.config is not None
    missing = p4runtime_pb2.DirectMeterEntry()
    missing.CopyFrom(dme)
    missing.table_entry.priority = 99
    assert fail_code(primary, update(U.MODIFY, direct_meter_entry=missing)) == [code_pb2.NOT_FOUND]
    assert T_ACL


def test_multicast_groups_and_clone_sessions(primary):
    mg = p4runtime_pb2.PacketReplicationEngineEntry()
    mg.multicast_group_entry.multicast_group_id = 1
    for port in (1, 2, 3):
        mg.multicast_group_entry.replicas.add(egress_port=port, instance=1)
    primary.write(update(U.INSERT, packet_replication_engine_entry=mg))
    assert state().pre.replicas(1) == ((1, 1), (2, 1), (3, 1))
    cs = p4runtime_pb2.PacketReplicationEngineEntry()
    cs.clone_session_entry.session_id = 5
    cs.clone_session_entry.replicas.add(egress_port=4, instance=0)
    cs.clone_session_entry.packet_length_bytes = 128
    primary.write(update(U.INSERT, packet_replication_engine_entry=cs))
    assert state().pre.sessions[5].packet_length_bytes == 128
    got = primary.read(Entity(packet_replication_engine_entry=p4runtime_pb2.PacketReplicationEngineEntry()))
    assert len(got) == 2
    mg.multicast_group_entry.replicas.pop()
    primary.write(update(U.MODIFY, packet_replication_engine_entry=mg))
    assert state().pre.replicas(1) == ((1, 1), (2, 1))
    dup = p4runtime_pb2.PacketReplicationEngineEntry()
    dup.CopyFrom(mg)
    dup.multicast_group_entry.replicas.add(egress_port=1, instance=1)
    codes = fail_code(primary, update(U.INSERT, packet_replication_engine_entry=mg),
                      update(U.MODIFY, packet_replication_engine_entry=dup))
    assert codes == [code_pb2.ALREADY_EXISTS, code_pb2.INVALID_ARGUMENT]
    primary.write(update(U.DELETE, packet_replication_engine_entry=mg))
    assert 1 not in state().pre.groups
    assert fail_code(primary, update(U.DELETE, packet_replication_engine_entry=mg)) \
        == [code_pb2.NOT_FOUND]


def test_digest_config(primary):
    d = p4runtime_pb2.DigestEntry(digest_id=D_LEARN)
    d.config.max_timeout_ns, d.config.max_list_size, d.config.ack_timeout_ns = 1000, 4, 10**9
    primary.write(update(U.INSERT, digest_entry=d))
    [got] = primary.read(Entity(digest_entry=p4runtime_pb2.DigestEntry()))
    assert got.digest_entry.config.max_list_size == 4
    assert state().digests["learn_t"].config.max_list_size == 4
    assert fail_code(primary, update(U.INSERT, digest_entry=d),
                     update(U.MODIFY, digest_entry=p4runtime_pb2.DigestEntry(digest_id=0x17FFFFFF))) \
        == [code_pb2.ALREADY_EXISTS, code_pb2.NOT_FOUND]
    primary.write(update(U.DELETE, digest_entry=d))
    assert primary.read(Entity(digest_entry=p4runtime_pb2.DigestEntry())) == []


def queue_entry(port: int, **fields) -> p4runtime_pb2.ExternEntry:
    st = struct_pb2.Struct()
    st.update(fields)
    e = p4runtime_pb2.ExternEntry(extern_type_id=0x81, extern_id=port)
    e.entry.Pack(st)
    return e


def test_queue_extension(primary, device):
    primary.write(update(U.MODIFY, extern_entry=queue_entry(2, rate_pps=1000, depth=16)))
    q = device.queue_config(2)
    assert (q.rate_pps, q.depth, q.rate_bps) == (1000, 16, 0)
    [got] = primary.read(Entity(extern_entry=p4runtime_pb2.ExternEntry(extern_type_id=0x81,
                                                                       extern_id=2)))
    st = struct_pb2.Struct()
    got.extern_entry.entry.Unpack(st)
    assert st["rate_pps"] == 1000 and st["depth"] == 16 and st["up"] is True
    assert len(primary.read(Entity(extern_entry=p4runtime_pb2.ExternEntry(extern_type_id=0x81)))) == 4
    codes = fail_code(primary, update(U.MODIFY, extern_entry=queue_entry(2, speed=3)),
                      update(U.MODIFY, extern_entry=queue_entry(2, depth=-1)),
                      update(U.MODIFY, extern_entry=queue_entry(77, depth=1)),
                      update(U.INSERT, extern_entry=queue_entry(2, depth=1)))
    assert codes == [code_pb2.INVALID_ARGUMENT, code_pb2.INVALID_ARGUMENT, code_pb2.NOT_FOUND,
                     code_pb2.INVALID_ARGUMENT]
    assert device.queue_config(2).depth == 16


def value_set(*ports: int) -> p4runtime_pb2.ValueSetEntry:
    v = p4runtime_pb2.ValueSetEntry(value_set_id=VS_PORTS)
    for port in ports:
        m = v.members.add().match.add(field_id=1)
        m.ternary.value = port.to_bytes(2, "big")
        m.ternary.mask = b"\xff\xff"
    return v


def test_value_sets(primary):
    primary.write(update(U.MODIFY, value_set_entry=value_set(80, 443)))
    from p4exec.runtime import Ternary
    assert state().value_sets["MyParser.tcp_ports"].members == [(Ternary(80, 0xFFFF),),
                                                                (Ternary(443, 0xFFFF),)]
    [got] = primary.read(Entity(value_set_entry=p4runtime_pb2.ValueSetEntry(value_set_id=VS_PORTS)))
    assert [m.match[0].ternary.value for m in got.value_set_entry.members] == [b"\x50", b"\x01\xbb"]
    assert fail_code(primary, update(U.MODIFY, value_set_entry=value_set(1, 2, 3)),
                     update(U.INSERT, value_set_entry=value_set(1)),
                     update(U.MODIFY, value_set_entry=value_set(7, 7))) \
        == [code_pb2.RESOURCE_EXHAUSTED, code_pb2.INVALID_ARGUMENT, code_pb2.ALREADY_EXISTS]
    assert len(state().value_sets["MyParser.tcp_ports"].members) == 2


def test_group_watch_ports_follow_port_liveness(primary):
    primary.write(update(U.INSERT, action_profile_member=member(1, port=1)),
                  update(U.INSERT, action_profile_member=member(2, port=2)))
    g = group(9, {1: 1, 2: 1})
    g.members[1].watch_port = b"\x02"
    primary.write(update(U.INSERT, action_profile_group=g))
    [got] = primary.read(Entity(action_profile_group=p4runtime_pb2.ActionProfileGroup()))
    assert got.action_profile_group.members[1].watch_port == b"\x02"
    prof = state().action_profiles["MyIngress.ecmp_selector"]
    assert prof.groups[9].watch == {2: 2}
    state().set_port_up(2, False)
    assert prof.groups[9].expanded == (1,)


def test_selector_total_size_is_enforced_across_groups(primary):
    primary.write(*(update(U.INSERT, action_profile_member=member(i)) for i in (1, 2)))
    # the profile holds 32 weight units in all; each group may hold 8
    primary.write(*(update(U.INSERT, action_profile_group=group(g, {1: 4, 2: 4})) for g in (1, 2, 3, 4)))
    assert fail_code(primary, update(U.INSERT, action_profile_group=group(5, {1: 1}))) \
        == [code_pb2.RESOURCE_EXHAUSTED]
    assert len(primary.read(Entity(action_profile_group=p4runtime_pb2.ActionProfileGroup()))) == 4


def test_unset_index_writes_every_cell(primary):
    reset = p4runtime_pb2.CounterEntry(counter_id=C_PORT)
    reset.data.packet_count = 7
    primary.write(update(U.MODIFY, counter_entry=reset))
    assert state().counters["MyIngress.port_counter"].read(5) == (7, 0)
    fill = p4runtime_pb2.RegisterEntry(register_id=R_REG)
    fill.data.bitstring = b"\x2a"
    primary.write(update(U.MODIFY, register_entry=fill))
    reg = state().registers["MyIngress.reg"]
    assert [reg.read(i) for i in range(16)] == [42] * 16


def test_queue_extension_needs_no_pipeline(make_client, device):
    c = make_client(election_id=3)
    c.connect()
    c.write(update(U.MODIFY, extern_entry=queue_entry(1, rate_bps=10**9)))
    assert device.queue_config(1).rate_bps == 10**9
    assert len(c.read(Entity(extern_entry=p4runtime_pb2.ExternEntry(extern_type_id=0x81)))) == 4
    with pytest.raises(grpc.RpcError) as exc:  # anything else still needs a pipeline
        c.write(update(U.MODIFY, extern_entry=queue_entry(1, depth=3)),
                update(U.MODIFY, counter_entry=p4runtime_pb2.CounterEntry(counter_id=C_PORT)))
    assert exc.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert device.queue_config(1).depth != 3


def test_rollback_restores_every_entity_kind(primary, device):
    from tests.support.p4rt_client import atomic_write
    primary.write(update(U.INSERT, action_profile_member=member(1, port=1)))
    reg = p4runtime_pb2.RegisterEntry(register_id=R_REG)
    reg.data.bitstring = b"\x07"
    primary.write(update(U.MODIFY, register_entry=reg))  # every cell = 7
    mg = p4runtime_pb2.PacketReplicationEngineEntry()
    mg.multicast_group_entry.multicast_group_id = 3
    mg.multicast_group_entry.replicas.add(egress_port=1)
    cnt = p4runtime_pb2.CounterEntry(counter_id=C_PORT)
    cnt.index.index = 2
    cnt.data.packet_count = 99
    reg1 = p4runtime_pb2.RegisterEntry(register_id=R_REG)
    reg1.index.index = 1
    reg1.data.bitstring = b"\x08"
    with pytest.raises(grpc.RpcError):
        atomic_write(primary, p4runtime_pb2.WriteRequest.ROLLBACK_ON_ERROR,
                     update(U.MODIFY, action_profile_member=member(1, port=9)),
                     update(U.INSERT, action_profile_member=member(2, port=2)),
                     update(U.MODIFY, register_entry=reg1),
                     update(U.INSERT, packet_replication_engine_entry=mg),
                     update(U.MODIFY, counter_entry=cnt),
                     update(U.MODIFY, extern_entry=queue_entry(2, depth=5)),
                     update(U.DELETE, action_profile_member=member(42)))  # fails
    prof = state().action_profiles["MyIngress.ecmp_selector"]
    assert prof.members == {1: prof.members[1]} and prof.members[1].args == (1, 1)
    assert [state().registers["MyIngress.reg"].read(i) for i in range(16)] == [7] * 16
    assert 3 not in state().pre.groups
    assert state().counters["MyIngress.port_counter"].read(2) == (0, 0)
    assert device.queue_config(2).depth != 5


def oneshot_entry(nhop: int, *ports_weights: tuple[int, int]) -> p4runtime_pb2.TableEntry:
    e = ecmp_entry(nhop)
    for port, weight in ports_weights:
        a = e.action.action_profile_action_set.action_profile_actions.add(weight=weight)
        a.action.CopyFrom(member(0, port=port).action)
    return e


def test_one_shot_action_sets(primary):
    primary.write(update(U.INSERT, table_entry=oneshot_entry(7, (1, 1), (2, 3))))
    [got] = [e.table_entry for e in primary.read(Entity(table_entry=p4runtime_pb2.TableEntry(
        table_id=T_ECMP)))]
    acts = got.action.action_profile_action_set.action_profile_actions
    assert [(a.weight, a.action.params[1].value) for a in acts] == [(1, b"\x01"), (3, b"\x02")]
    prof = state().action_profiles["MyIngress.ecmp_selector"]
    assert len(prof.members) == 2 and len(prof.groups) == 1
    table = state().tables["MyIngress.ecmp"]
    res = table.lookup((7,), 64)  # (no selector fields in this P4Info: one member is chosen)
    assert res.hit and res.action.args[1] in (1, 2)
    # hidden members/groups are not the controller's: they are not read back
    assert primary.read(Entity(action_profile_member=p4runtime_pb2.ActionProfileMember())) == []
    # modify to another set: the old hidden group goes away
    primary.write(update(U.MODIFY, table_entry=oneshot_entry(7, (4, 2))))
    assert len(prof.members) == 1 and len(prof.groups) == 1
    assert table.lookup((7,), 64).action.args[1] == 4
    # mixing styles on one selector is refused
    assert fail_code(primary, update(U.INSERT, action_profile_member=member(1))) \
        == [code_pb2.INVALID_ARGUMENT]
    bad = oneshot_entry(8, (1, 0))
    too_big = oneshot_entry(9, (1, 5), (2, 5))  # weights 10 > max_group_size 8
    assert fail_code(primary, update(U.INSERT, table_entry=bad),
                     update(U.INSERT, table_entry=too_big)) == [code_pb2.INVALID_ARGUMENT] * 2
    primary.write(update(U.DELETE, table_entry=ecmp_entry(7)))
    assert prof.members == {} and prof.groups == {}


def test_one_shot_refused_when_members_are_used(primary):
    primary.write(update(U.INSERT, action_profile_member=member(1)))
    assert fail_code(primary, update(U.INSERT, table_entry=oneshot_entry(7, (1, 1)))) \
        == [code_pb2.INVALID_ARGUMENT]


def test_watch_port_must_be_a_device_port(primary):
    primary.write(update(U.INSERT, action_profile_member=member(1)))
    g = group(4, {1: 1})
    g.members[0].watch_port = b"\x63"  # port 99: not on this device (ports 1-4)
    assert fail_code(primary, update(U.INSERT, action_profile_group=g)) == [code_pb2.INVALID_ARGUMENT]
