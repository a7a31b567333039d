"""Table entries over real gRPC: every match kind, canonical bytes, defaults, counters, errors."""

from __future__ import annotations

import grpc
import pytest
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2

from tests.support.p4rt_client import U, atomic_write, fail_code, update, write_errors
from tests.support.p4rt_fixture import (
    A_DEFAULT_ONLY,
    A_DROP,
    A_NOACTION,
    A_SET_NHOP,
    A_SET_PORT,
    T_ACL,
    T_CONST,
    T_LPM,
    acl_entry,
    lpm_entry,
)

Entity = p4runtime_pb2.Entity


def read_table(c, table_id=T_LPM, **kw):
    return [e.table_entry for e in c.read(Entity(table_entry=p4runtime_pb2.TableEntry(
        table_id=table_id, **kw)))]


def test_insert_read_modify_delete_lpm(primary):
    primary.write(update(U.INSERT, table_entry=lpm_entry(port=1)))
    [got] = read_table(primary)
    assert got.match[0].lpm.value == bytes([10, 0, 1, 0])
    assert got.match[0].lpm.prefix_len == 24
    assert got.action.action.params[1].value == b"\x01"
    primary.write(update(U.MODIFY, table_entry=lpm_entry(port=2)))
    [got] = read_table(primary)
    assert got.action.action.params[1].value == b"\x02"
    primary.write(update(U.DELETE, table_entry=lpm_entry()))
    assert read_table(primary) == []


def test_padded_values_accepted_and_read_back_canonical(primary):
    e = lpm_entry()
    e.action.action.params[1].value = b"\x00\x01"  # 9-bit port padded to 2 bytes
    e.action.action.params[0].value = b"\x00" * 5 + b"\x0a"  # 48-bit value, full width
    e.match[0].lpm.value = b"\x00\x00\x0a\x00\x01\x00"  # longer than 4 bytes, value fits
    primary.write(update(U.INSERT, table_entry=e))
    [got] = read_table(primary)
    assert got.action.action.params[0].value == b"\x0a"
    assert got.action.action.params[1].value == b"\x01"
    assert got.match[0].lpm.value == b"\x0a\x00\x01\x00"


def test_ternary_range_optional_exact_with_priority(primary):
    primary.write(update(U.INSERT, table_entry=acl_entry(priority=10, inport=2)),
                  update(U.INSERT, table_entry=acl_entry(priority=20, src=None, ports=None)))
    got = read_table(primary, T_ACL)
    assert sorted(e.priority for e in got) == [10, 20]
    by_prio = {e.priority: e for e in got}
    assert {m.field_id for m in by_prio[20].match} == {4}  # don't-care fields stay omitted
    assert by_prio[10].match[2].optional.value == b"\x02"
    # same match, other priority: a different entry
    primary.write(update(U.INSERT, table_entry=acl_entry(priority=11, inport=2)))
    assert len(read_table(primary, T_ACL)) == 3
    # read one entry by its match and priority
    probe = acl_entry(priority=11, inport=2)
    probe.ClearField("action")
    [one] = [e.table_entry for e in primary.read(Entity(table_entry=probe))]
    assert one.priority == 11


def test_omitted_lpm_field_is_a_default_route(primary):
    e = lpm_entry()
    e.ClearField("match")
    primary.write(update(U.INSERT, table_entry=e))
    [got] = read_table(primary)
    assert list(got.match) == []


def test_wildcard_read_all_tables(primary):
    primary.write(update(U.INSERT, table_entry=lpm_entry()),
                  update(U.INSERT, table_entry=acl_entry()))
    got = read_table(primary, 0)
    assert sorted(e.table_id for e in got) == sorted([T_LPM, T_ACL])


def test_default_entry_modify_and_read(primary):
    [d] = read_table(primary, is_default_action=True)
    assert d.is_default_action and d.action.action.action_id == A_DROP
    e = p4runtime_pb2.TableEntry(table_id=T_LPM, is_default_action=True)
    e.action.action.action_id = A_DEFAULT_ONLY
    primary.write(update(U.MODIFY, table_entry=e))
    [d] = read_table(primary, is_default_action=True)
    assert d.action.action.action_id == A_DEFAULT_ONLY
    # default entries are not part of wildcard reads
    assert read_table(primary) == []
    # MODIFY without action resets to the program's default
    primary.write(update(U.MODIFY, table_entry=p4runtime_pb2.TableEntry(
        table_id=T_LPM, is_default_action=True)))
    [d] = read_table(primary, is_default_action=True)
    assert d.action.action.action_id == A_DROP


def test_default_entry_errors(primary):
    e = p4runtime_pb2.TableEntry(table_id=T_LPM, is_default_action=True)
    e.action.action.action_id = A_NOACTION
    assert fail_code(primary, update(U.INSERT, table_entry=e)) == [code_pb2.INVALID_ARGUMENT]
    const = p4runtime_pb2.TableEntry(table_id=T_CONST, is_default_action=True)
    const.action.action.action_id = A_NOACTION
    assert fail_code(primary, update(U.MODIFY, table_entry=const)) == [code_pb2.PERMISSION_DENIED]
    bad_scope = lpm_entry()
    bad_scope.action.action.Clear()
    bad_scope.action.action.action_id = A_DEFAULT_ONLY  # valid action, wrong scope
    assert fail_code(primary, update(U.INSERT, table_entry=bad_scope)) == [code_pb2.PERMISSION_DENIED]
    idle_default = p4runtime_pb2.TableEntry(table_id=T_LPM, is_default_action=True, idle_timeout_ns=5)
    assert fail_code(primary, update(U.MODIFY, table_entry=idle_default)) == [code_pb2.INVALID_ARGUMENT]


def test_counter_data_only_when_requested(primary):
    primary.write(update(U.INSERT, table_entry=lpm_entry()))
    [plain] = read_table(primary)
    assert not plain.HasField("counter_data")
    req = p4runtime_pb2.TableEntry(table_id=T_LPM)
    req.counter_data.SetInParent()
    [with_counts] = [e.table_entry for e in primary.read(Entity(table_entry=req))]
    assert with_counts.HasField("counter_data")
    assert with_counts.counter_data.packet_count == 0
    # direct counter entry MODIFY then read back, through both views
    dce = p4runtime_pb2.DirectCounterEntry()
    dce.table_entry.CopyFrom(lpm_entry())
    dce.table_entry.ClearField("action")
    dce.data.packet_count, dce.data.byte_count = 3, 300
    primary.write(update(U.MODIFY, direct_counter_entry=dce))
    [with_counts] = [e.table_entry for e in primary.read(Entity(table_entry=req))]
    assert (with_counts.counter_data.packet_count, with_counts.counter_data.byte_count) == (3, 300)
    [got] = [e.direct_counter_entry for e in primary.read(Entity(
        direct_counter_entry=p4runtime_pb2.DirectCounterEntry()))]
    assert got.data.byte_count == 300
    # and the runtime's own entry carries it (what the data plane counts on)
    state = primary_state(primary)
    [rt] = state.tables["MyIngress.ipv4_lpm"].entries()
    assert (rt.packet_count, rt.byte_count) == (3, 300)


def primary_state(_client):
    from tests.support.p4rt_client import current_server
    return current_server().service.ctx.program.state


@pytest.mark.parametrize("mutate, code", [
    (lambda e: setattr(e.match[0].lpm, "prefix_len", 33), code_pb2.INVALID_ARGUMENT),
    (lambda e: setattr(e.match[0].lpm, "prefix_len", 0), code_pb2.INVALID_ARGUMENT),
    (lambda e: setattr(e.match[0].lpm, "value", b"\x0a\x00\x01\x01"), code_pb2.INVALID_ARGUMENT),
    (lambda e: setattr(e.match[0].lpm, "value", b"\x01\x0a\x00\x01\x00"), code_pb2.OUT_OF_RANGE),

    (lambda e: setattr(e.action.action.params[1], "value", b"\x02\x00"), code_pb2.OUT_OF_RANGE),
    (lambda e: setattr(e.action.action.params[1], "value", b""), code_pb2.OUT_OF_RANGE),
    (lambda e: setattr(e, "is_const", True), code_pb2.INVALID_ARGUMENT),
    (lambda e: e.time_since_last_hit.SetInParent(), code_pb2.INVALID_ARGUMENT),
    (lambda e: setattr(e, "idle_timeout_ns", 10), code_pb2.INVALID_ARGUMENT),
    (lambda e: e.action.action.params.pop(), code_pb2.INVALID_ARGUMENT),
    (lambda e: setattr(e.action.action, "action_id", A_SET_PORT), code_pb2.INVALID_ARGUMENT),
    (lambda e: setattr(e.action.action, "action_id", 0x01FFFFFF), code_pb2.NOT_FOUND),
    (lambda e: setattr(e, "table_id", 0x02FFFFFF), code_pb2.NOT_FOUND),
    (lambda e: setattr(e.match[0], "field_id", 9), code_pb2.INVALID_ARGUMENT),
    (lambda e: setattr(e, "priority", 5), code_pb2.INVALID_ARGUMENT),
    (lambda e: e.match.append(e.match[0]), code_pb2.INVALID_ARGUMENT),
    (lambda e: e.match[0].exact.SetInParent(), code_pb2.INVALID_ARGUMENT),
])
def test_invalid_entries_rejected_and_state_unchanged(primary, mutate, code):
    primary.write(update(U.INSERT, table_entry=lpm_entry(prefix=0x0B000000, plen=8)))
    before = read_table(primary)
    e = lpm_entry()
    mutate(e)
    assert fail_code(primary, update(U.INSERT, table_entry=e)) == [code]
    assert read_table(primary) == before


def test_acl_validation(primary):
    no_prio = acl_entry(priority=0)
    zero_mask = acl_entry(src=(0, 0))
    full_range = acl_entry(ports=(0, 0xFFFF))
    reversed_range = acl_entry(ports=(90, 80))
    outside_mask = acl_entry(src=(0x0A000001, 0xFF000000))
    missing_exact = acl_entry()
    del missing_exact.match[-1]
    codes = fail_code(primary, *(update(U.INSERT, table_entry=e) for e in
                                 (no_prio, zero_mask, full_range, reversed_range, outside_mask,
                                  missing_exact)))
    assert codes == [code_pb2.INVALID_ARGUMENT] * 6
    assert read_table(primary, T_ACL) == []


def test_batch_continue_on_error_reports_each_update(primary):
    codes = fail_code(
        primary,
        update(U.INSERT, table_entry=lpm_entry(prefix=0x0A000000, plen=8)),
        update(U.INSERT, table_entry=lpm_entry(prefix=0x0A000000, plen=8)),  # duplicate
        update(U.MODIFY, table_entry=lpm_entry(prefix=0x0C000000, plen=8)),  # missing
        update(U.DELETE, table_entry=lpm_entry(prefix=0x0D000000, plen=8)),  # missing
        update(U.INSERT, table_entry=lpm_entry(prefix=0x0E000000, plen=8)),
    )
    assert codes == [code_pb2.OK, code_pb2.ALREADY_EXISTS, code_pb2.NOT_FOUND, code_pb2.NOT_FOUND,
                     code_pb2.OK]
    assert len(read_table(primary)) == 2


def test_table_full_is_resource_exhausted(primary):
    for i in range(4):
        primary.write(update(U.INSERT, table_entry=lpm_entry(prefix=(10 + i) << 24, plen=8)))
    assert fail_code(primary, update(U.INSERT, table_entry=lpm_entry(prefix=99 << 24, plen=8))) \
        == [code_pb2.RESOURCE_EXHAUSTED]
    assert len(read_table(primary)) == 4


def test_const_table_is_permission_denied(primary):
    e = p4runtime_pb2.TableEntry(table_id=T_CONST)
    e.match.add(field_id=1).exact.value = b"\x01"
    e.action.action.action_id = A_NOACTION
    assert fail_code(primary, update(U.INSERT, table_entry=e)) == [code_pb2.PERMISSION_DENIED]


@pytest.mark.parametrize("atomicity", [p4runtime_pb2.WriteRequest.ROLLBACK_ON_ERROR,
                                       p4runtime_pb2.WriteRequest.DATAPLANE_ATOMIC])
def test_all_or_nothing_batches_roll_back(primary, atomicity):
    from tests.support.p4rt_client import current_server
    state = current_server().service.ctx.program.state
    primary.write(update(U.INSERT, table_entry=lpm_entry(prefix=0x0A000000, plen=8, port=1)),
                  update(U.INSERT, table_entry=lpm_entry(prefix=0x0B000000, plen=8, port=1)))
    dce = p4runtime_pb2.DirectCounterEntry()
    dce.table_entry.CopyFrom(lpm_entry(prefix=0x0B000000, plen=8))
    dce.table_entry.ClearField("action")
    dce.data.packet_count = 5
    primary.write(update(U.MODIFY, direct_counter_entry=dce))
    default = p4runtime_pb2.TableEntry(table_id=T_LPM, is_default_action=True)
    default.action.action.action_id = A_NOACTION
    req = p4runtime_pb2.TableEntry(table_id=T_LPM)
    req.counter_data.SetInParent()
    before = sorted(e.SerializeToString() for e in [x.table_entry for x in primary.read(
        Entity(table_entry=req))])
    batch = [
        update(U.INSERT, table_entry=lpm_entry(prefix=0x0C000000, plen=8)),
        update(U.MODIFY, table_entry=lpm_entry(prefix=0x0A000000, plen=8, port=7)),
        update(U.DELETE, table_entry=lpm_entry(prefix=0x0B000000, plen=8)),
        update(U.MODIFY, table_entry=default),
        update(U.INSERT, table_entry=lpm_entry(prefix=0x0A000000, plen=8)),  # duplicate: fails
        update(U.INSERT, table_entry=lpm_entry(prefix=0x0D000000, plen=8)),  # never tried
    ]
    with pytest.raises(grpc.RpcError) as exc:
        atomic_write(primary, atomicity, *batch)
    assert exc.value.code() == grpc.StatusCode.UNKNOWN
    assert [c for c, _ in write_errors(exc.value)] == [code_pb2.ABORTED] * 4 + [
        code_pb2.ALREADY_EXISTS, code_pb2.ABORTED]
    after = sorted(e.SerializeToString() for e in [x.table_entry for x in primary.read(
        Entity(table_entry=req))])
    assert after == before  # entries, actions and the deleted entry's counter are back
    [d] = read_table(primary, is_default_action=True)
    assert d.action.action.action_id == A_DROP
    assert len(state.tables["MyIngress.ipv4_lpm"]) == 2
    # and a clean all-or-nothing batch applies in full
    atomic_write(primary, atomicity, update(U.INSERT, table_entry=lpm_entry(prefix=0x0C000000, plen=8)),
                 update(U.MODIFY, table_entry=default))
    assert len(read_table(primary)) == 3


def test_set_nhop_reaches_runtime_lookup(primary):
    primary.write(update(U.INSERT, table_entry=lpm_entry(prefix=0x0A000100, plen=24, port=4)))
    table = primary_state(primary).tables["MyIngress.ipv4_lpm"]
    res = table.lookup((0x0A000105,), 64)
    assert res.hit and res.action.action == "MyIngress.set_nhop" and res.action.args == (10, 4)
    assert not table.lookup((0x0B000105,), 64).hit
    assert A_SET_NHOP  # ids come from the fixture


def test_reads_see_whole_write_batches(primary, make_client):
    """Spec: a Read returns a state where each concurrent Write is complete or not begun."""
    import threading

    reader = make_client()
    p4info_table = p4runtime_pb2.TableEntry(table_id=T_ACL)
    seen: list[int] = []
    stop = threading.Event()

    def read_loop():
        while not stop.wait(0.01):
            seen.append(len(reader.read(Entity(table_entry=p4info_table))))

    t = threading.Thread(target=read_loop)
    t.start()
    try:
        for b in range(6):
            primary.write(*(update(U.INSERT, table_entry=acl_entry(priority=b * 10 + i + 1))
                            for i in range(10)))
    finally:
        stop.set()
        t.join(timeout=10)
    assert seen and all(n % 10 == 0 for n in seen)
    assert len(read_table(primary, T_ACL)) == 60
