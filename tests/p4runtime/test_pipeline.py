"""Capabilities and the forwarding pipeline config RPCs."""

from __future__ import annotations

import grpc
import pytest
from p4.v1 import p4runtime_pb2

from tests.support.p4rt_client import U, update
from tests.support.p4rt_fixture import T_LPM, lpm_entry

CFG = p4runtime_pb2.SetForwardingPipelineConfigRequest
GET = p4runtime_pb2.GetForwardingPipelineConfigRequest


def code_of(call) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as exc:
        call()
    return exc.value.code()


def test_capabilities(make_client):
    c = make_client()
    resp = c.stub.Capabilities(p4runtime_pb2.CapabilitiesRequest(), timeout=5)
    assert resp.p4runtime_api_version.startswith("1.")


def test_no_pipeline_is_failed_precondition(make_client):
    c = make_client(election_id=5)
    c.connect()
    get = p4runtime_pb2.GetForwardingPipelineConfigRequest(device_id=1)
    assert not c.stub.GetForwardingPipelineConfig(get, timeout=5).HasField("config")  # unknown: unset
    assert code_of(lambda: c.write(update(U.INSERT, table_entry=lpm_entry()))) \
        == grpc.StatusCode.FAILED_PRECONDITION
    assert code_of(lambda: c.read(p4runtime_pb2.Entity(table_entry={}))) \
        == grpc.StatusCode.FAILED_PRECONDITION


def test_set_and_get_all_response_types(make_client, p4info):
    c = make_client(election_id=3)
    c.connect()
    c.set_pipeline(p4info, cookie=77)
    for rt, has_p4info in ((GET.ALL, True), (GET.COOKIE_ONLY, False),
                           (GET.P4INFO_AND_COOKIE, True), (GET.DEVICE_CONFIG_AND_COOKIE, False)):
        resp = c.stub.GetForwardingPipelineConfig(
            p4runtime_pb2.GetForwardingPipelineConfigRequest(device_id=1, response_type=rt), timeout=5)
        assert resp.config.cookie.cookie == 77
        assert resp.config.HasField("p4info") == has_p4info
        if has_p4info:
            assert resp.config.p4info == p4info


def test_verify_save_and_commit(make_client, p4info, device):
    c = make_client(election_id=3)
    c.connect()
    get = p4runtime_pb2.GetForwardingPipelineConfigRequest(device_id=1)
    c.set_pipeline(p4info, action=CFG.VERIFY)  # nothing changes
    assert not c.stub.GetForwardingPipelineConfig(get, timeout=5).HasField("config")
    assert code_of(lambda: c.set_pipeline(None, action=CFG.COMMIT)) == grpc.StatusCode.NOT_FOUND
    c.set_pipeline(p4info, action=CFG.VERIFY_AND_SAVE, cookie=5)
    assert device.program is None  # saved, not running
    # Read/Write now address the saved config; its state collects the writes until COMMIT
    c.write(update(U.INSERT, table_entry=lpm_entry()))
    assert code_of(lambda: c.set_pipeline(p4info, action=CFG.COMMIT)) \
        == grpc.StatusCode.INVALID_ARGUMENT  # COMMIT takes no config
    c.set_pipeline(None, action=CFG.COMMIT)
    assert c.stub.GetForwardingPipelineConfig(get, timeout=5).config.cookie.cookie == 5
    assert len(device.program.state.tables["MyIngress.ipv4_lpm"]) == 1
    assert code_of(lambda: c.set_pipeline(None, action=CFG.COMMIT)) == grpc.StatusCode.NOT_FOUND


def test_unspecified_action_and_wrong_device(make_client, p4info):
    c = make_client(election_id=3)
    c.connect()
    assert code_of(lambda: c.set_pipeline(p4info, action=CFG.UNSPECIFIED)) \
        == grpc.StatusCode.INVALID_ARGUMENT
    get = p4runtime_pb2.GetForwardingPipelineConfigRequest(device_id=99)
    assert code_of(lambda: c.stub.GetForwardingPipelineConfig(get, timeout=5)) \
        == grpc.StatusCode.NOT_FOUND


def test_non_primary_cannot_set_pipeline(make_client, p4info):
    a = make_client(election_id=10)
    a.connect()
    b = make_client(election_id=4)
    b.connect()
    assert code_of(lambda: b.set_pipeline(p4info)) == grpc.StatusCode.PERMISSION_DENIED
    a.set_pipeline(p4info)


def test_commit_clears_state_and_reconcile_keeps_it(primary, p4info):
    primary.write(update(U.INSERT, table_entry=lpm_entry()))
    read_all = p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry(table_id=T_LPM))
    assert len(primary.read(read_all)) == 1
    primary.set_pipeline(p4info, action=CFG.RECONCILE_AND_COMMIT, cookie=9)
    assert len(primary.read(read_all)) == 1
    primary.set_pipeline(p4info, action=CFG.VERIFY_AND_COMMIT)
    assert primary.read(read_all) == []


def test_reconcile_refused_when_state_does_not_fit(primary, p4info):
    primary.write(update(U.INSERT, table_entry=lpm_entry()))
    smaller = type(p4info)()
    smaller.CopyFrom(p4info)
    del smaller.tables[0]  # the LPM table disappears
    with pytest.raises(grpc.RpcError) as exc:
        primary.set_pipeline(smaller, action=CFG.RECONCILE_AND_COMMIT)
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    read_all = p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry(table_id=T_LPM))
    assert len(primary.read(read_all)) == 1
