"""Client arbitration over real streams: two clients, primary changes, disconnects."""

from __future__ import annotations

import queue

import grpc
import pytest
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2

from tests.support.p4rt_client import U, update
from tests.support.p4rt_fixture import lpm_entry


def status(msg) -> int:
    return msg.arbitration.status.code


def test_two_clients_primary_change_and_permission(make_client, p4info):
    a = make_client(election_id=5)
    assert status(a.connect()) == code_pb2.OK
    a.set_pipeline(p4info)
    b = make_client(election_id=3)
    first_b = b.connect()
    assert status(first_b) == code_pb2.ALREADY_EXISTS
    assert first_b.arbitration.election_id.low == 5  # the primary's id
    with pytest.raises(grpc.RpcError) as exc:
        b.write(update(U.INSERT, table_entry=lpm_entry()))
    assert exc.value.code() == grpc.StatusCode.PERMISSION_DENIED
    # a write naming someone else's (or no) election id is refused too
    with pytest.raises(grpc.RpcError) as exc:
        a.write(update(U.INSERT, table_entry=lpm_entry()), election_id=4)
    assert exc.value.code() == grpc.StatusCode.PERMISSION_DENIED
    a.write(update(U.INSERT, table_entry=lpm_entry()))
    # reads need no arbitration
    assert len(b.read(p4runtime_pb2.Entity(table_entry={}))) == 1
    # b takes over: both hear about it
    b.arbitrate(9)
    assert status(b.get("arbitration")) == code_pb2.OK
    note = a.get("arbitration")
    assert status(note) == code_pb2.ALREADY_EXISTS and note.arbitration.election_id.low == 9
    b.write(update(U.DELETE, table_entry=lpm_entry()))
    with pytest.raises(grpc.RpcError) as exc:
        a.write(update(U.INSERT, table_entry=lpm_entry()))
    assert exc.value.code() == grpc.StatusCode.PERMISSION_DENIED


def test_primary_disconnect_notifies_backups_and_new_primary_takes_over(make_client, p4info):
    a = make_client(election_id=7)
    a.connect()
    a.set_pipeline(p4info)
    a.write(update(U.INSERT, table_entry=lpm_entry()))
    b = make_client(election_id=2)
    b.connect()
    a.close()
    note = b.get("arbitration")
    assert status(note) == code_pb2.NOT_FOUND  # no primary now
    b.arbitrate(8)
    assert status(b.get("arbitration")) == code_pb2.OK
    # the switch state survived the primary's disconnect
    assert len(b.read(p4runtime_pb2.Entity(table_entry={}))) == 1
    b.write(update(U.DELETE, table_entry=lpm_entry()))


def test_backup_disconnect_disturbs_nobody(make_client, p4info):
    a = make_client(election_id=7)
    a.connect()
    a.set_pipeline(p4info)
    b = make_client(election_id=2)
    b.connect()
    b.close()
    with pytest.raises(queue.Empty):
        a.get("arbitration", timeout=0.3)
    a.write(update(U.INSERT, table_entry=lpm_entry()))


def test_duplicate_election_id_and_unknown_device_close_the_stream(make_client):
    a = make_client(election_id=7)
    a.connect()
    b = make_client(election_id=7)
    b.arbitrate()
    b_stream = b
    b_stream.stream = b.stub.StreamChannel(iter([_arb(1, 7)]))
    with pytest.raises(grpc.RpcError) as exc:
        list(b_stream.stream)
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    c = make_client(device_id=42)
    with pytest.raises(grpc.RpcError) as exc:
        list(c.stub.StreamChannel(iter([_arb(42, 1)])))
    assert exc.value.code() == grpc.StatusCode.NOT_FOUND


def test_roles_have_independent_primaries(make_client):
    a = make_client(election_id=5)
    assert status(a.connect()) == code_pb2.OK
    r = make_client(election_id=1, role="observer")
    msg = r.connect()
    assert status(msg) == code_pb2.OK and msg.arbitration.role.name == "observer"


def test_no_election_id_is_a_backup(make_client):
    c = make_client()
    msg = p4runtime_pb2.StreamMessageRequest()
    msg.arbitration.device_id = 1
    c.stream = c.stub.StreamChannel(iter([msg]))
    first = next(iter(c.stream))
    assert status(first) == code_pb2.NOT_FOUND


def _arb(device_id: int, eid: int) -> p4runtime_pb2.StreamMessageRequest:
    msg = p4runtime_pb2.StreamMessageRequest()
    msg.arbitration.device_id = device_id
    msg.arbitration.election_id.low = eid
    return msg


def test_who_hears_an_arbitration_update(make_client):
    a = make_client(election_id=5)
    a.connect()
    b = make_client(election_id=2)
    b.connect()
    with pytest.raises(queue.Empty):  # a backup joining is answered alone
        a.get("arbitration", timeout=0.3)
    # a primary re-arbitrating (same id) is announced to everyone
    a.arbitrate(5)
    assert status(a.get("arbitration")) == code_pb2.OK
    assert status(b.get("arbitration")) == code_pb2.ALREADY_EXISTS
    # a backup re-arbitrating as a backup is answered alone
    b.arbitrate(3)
    assert status(b.get("arbitration")) == code_pb2.ALREADY_EXISTS
    with pytest.raises(queue.Empty):
        a.get("arbitration", timeout=0.3)
    # the primary stepping down: everyone hears there is no primary now
    a.arbitrate(1)
    assert status(a.get("arbitration")) == code_pb2.NOT_FOUND
    assert status(b.get("arbitration")) == code_pb2.NOT_FOUND


def test_role_config_is_refused(make_client):
    c = make_client()
    msg = _arb(1, 4)
    msg.arbitration.role.name = "ops"
    msg.arbitration.role.config.type_url = "type.googleapis.com/some.RoleConfig"
    with pytest.raises(grpc.RpcError) as exc:
        list(c.stub.StreamChannel(iter([msg])))
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
