"""Two devices behind one P4Runtime server (P4RuntimeServer.shared): requests go by device_id, each device keeps
its own arbitration and state, an unknown device id is NOT_FOUND and changes nothing; and the controller's
sessions with both share one channel."""

from __future__ import annotations

import grpc
import pytest
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2

from controller.channels import CHANNELS
from controller.client import SwitchConnection
from p4exec.p4runtime import P4RuntimeServer
from p4exec.switch.inprocess import InProcessDevice
from tests.support.p4rt_client import Client, U, update
from tests.support.p4rt_fixture import lpm_entry

ALL_TABLES = p4runtime_pb2.Entity(table_entry={})


@pytest.fixture
def shared():
    devices = [InProcessDevice(device_id=d, cpu_port=255, ports=(1, 2, 3, 4)) for d in (1, 2)]
    srv = P4RuntimeServer.shared(devices, "127.0.0.1:0").start()
    clients: list[Client] = []

    def make(device_id: int, election_id: int) -> Client:
        c = Client(srv.address, device_id=device_id, election_id=election_id)
        clients.append(c)
        return c

    yield srv, make
    for c in clients:
        c.close()
    srv.stop(grace=0.5)


def test_devices_behind_one_server_are_independent(shared, p4info):
    srv, make = shared
    a, b = make(1, 10), make(2, 10)  # the same election id: a different device, so both are primary
    assert a.connect().arbitration.status.code == code_pb2.OK
    assert b.connect().arbitration.status.code == code_pb2.OK
    a.set_pipeline(p4info)
    b.set_pipeline(p4info)
    a.write(update(U.INSERT, table_entry=lpm_entry()))
    assert len(a.read(ALL_TABLES)) == 1
    assert b.read(ALL_TABLES) == []  # written to device 1 only
    # arbitration is per device: a backup of device 2 does not touch device 1's primary
    backup = make(2, 3)
    first = backup.connect()
    assert first.arbitration.status.code == code_pb2.ALREADY_EXISTS
    assert first.arbitration.device_id == 2
    b.write(update(U.INSERT, table_entry=lpm_entry(port=2)))
    with pytest.raises(grpc.RpcError) as exc:
        backup.write(update(U.INSERT, table_entry=lpm_entry(prefix=0x0A000200)))
    assert exc.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert [e.table_entry.action.action.params[-1].value for e in b.read(ALL_TABLES)] == [b"\x02"]
    assert len(a.read(ALL_TABLES)) == 1
    assert set(srv.services) == {1, 2}


def test_unknown_device_id_is_not_found_and_changes_nothing(shared, p4info):
    srv, make = shared
    a = make(1, 10)
    a.connect()
    a.set_pipeline(p4info)
    a.write(update(U.INSERT, table_entry=lpm_entry()))
    ghost = make(7, 10)
    for call in (lambda: ghost.write(update(U.INSERT, table_entry=lpm_entry(port=3))),
                 lambda: ghost.read(ALL_TABLES), lambda: ghost.set_pipeline(p4info),
                 lambda: ghost.stub.GetForwardingPipelineConfig(
                     p4runtime_pb2.GetForwardingPipelineConfigRequest(device_id=7), timeout=5)):
        with pytest.raises(grpc.RpcError) as exc:
            call()
        assert exc.value.code() == grpc.StatusCode.NOT_FOUND
    ended = ghost.connect()  # a stream arbitrating for it is ended NOT_FOUND
    assert isinstance(ended, grpc.RpcError) and ended.code() == grpc.StatusCode.NOT_FOUND
    entries = a.read(ALL_TABLES)
    assert len(entries) == 1 and entries[0].table_entry.action.action.params[-1].value == b"\x01"
    assert [s.device_id for s in srv.services[1].arbitrator.sessions()] == [1]


def test_stream_message_before_arbitration_is_a_stream_error(shared):
    """The device is not known until the arbitration: what comes before gets an error, the stream goes on."""
    _srv, make = shared
    c = make(1, 10)
    ack = p4runtime_pb2.StreamMessageRequest()
    ack.digest_ack.digest_id = 1
    arb = p4runtime_pb2.StreamMessageRequest()
    arb.arbitration.device_id = 1
    arb.arbitration.election_id.low = 10
    stream = c.stub.StreamChannel(iter([ack, arb]))
    try:
        first, second = next(stream), next(stream)
    finally:
        stream.cancel()
    assert first.WhichOneof("update") == "error"
    assert first.error.canonical_code == code_pb2.FAILED_PRECONDITION
    assert first.error.digest_list_ack.digest_list_ack.digest_id == 1
    assert second.arbitration.status.code == code_pb2.OK


def test_controller_sessions_share_one_channel(shared, p4info):
    srv, _make = shared
    conns = [SwitchConnection(srv.address, device_id=d, p4info=p4info, election_id=5) for d in (1, 2)]
    try:
        for c in conns:
            c.connect()
            assert c.is_primary
        assert conns[0]._channel is conns[1]._channel
        assert CHANNELS.users(srv.address) == 2
        conns[0].close()  # its stream ends; device 2's session stays up on the same channel
        assert CHANNELS.users(srv.address) == 1
        assert conns[1].stream_alive()
        assert conns[1].capabilities()
        conns[1].set_pipeline(b"", p4info)
        assert conns[1].get_pipeline().p4info == p4info
    finally:
        for c in conns:
            c.close()
    assert CHANNELS.users(srv.address) == 0
