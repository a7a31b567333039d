"""Server start/stop: bounded shutdown with clients attached, free ports, loopback."""

from __future__ import annotations

import threading
import time

import grpc
from p4.v1 import p4runtime_pb2

from p4exec.p4runtime import P4RuntimeServer
from p4exec.switch.inprocess import InProcessDevice
from tests.support.p4rt_client import END, Client


def test_stop_is_bounded_with_open_streams_and_clients_see_the_end(p4info):
    srv = P4RuntimeServer(InProcessDevice(device_id=1), "127.0.0.1:0").start()
    assert srv.address.startswith("127.0.0.1:") and srv.port > 0
    clients = [Client(srv.address, election_id=i + 1) for i in range(3)]
    try:
        for c in clients:
            c.connect()
        clients[-1].set_pipeline(p4info)
        t0 = time.monotonic()
        srv.stop(grace=0.5)
        assert time.monotonic() - t0 < 3.0
        for c in clients:  # every stream ends (after any arbitration notes still queued)
            while True:
                msg = c.get(timeout=3)
                if msg is END or isinstance(msg, grpc.RpcError):
                    break
        for t in threading.enumerate():
            if t.name.startswith("p4rt-stream"):
                t.join(timeout=2)
                assert not t.is_alive()
    finally:
        for c in clients:
            c.close()


def test_two_servers_side_by_side_are_independent(p4info):
    a = P4RuntimeServer(InProcessDevice(device_id=1), "127.0.0.1:0").start()
    b = P4RuntimeServer(InProcessDevice(device_id=2), "127.0.0.1:0").start()
    ca, cb = Client(a.address, device_id=1), Client(b.address, device_id=2)
    try:
        ca.connect()
        cb.connect()
        ca.set_pipeline(p4info, cookie=1)
        get = p4runtime_pb2.GetForwardingPipelineConfigRequest(device_id=2)
        assert not cb.stub.GetForwardingPipelineConfig(get, timeout=5).HasField("config")
        get.device_id = 1
        assert ca.stub.GetForwardingPipelineConfig(get, timeout=5).config.cookie.cookie == 1
    finally:
        ca.close()
        cb.close()
        a.stop(grace=0.2)
        b.stop(grace=0.2)


def test_device_started_with_a_program_is_served_at_once():
    from p4exec.v1model.loader import load_config
    from tests.support.p4rt_fixture import SOURCE

    dev = InProcessDevice(device_id=1)
    p4info = load_config(SOURCE).p4info
    dev.commit(dev.load_config(p4info, SOURCE))  # as `p4exec switch OUT.json` does before serving
    srv = P4RuntimeServer(dev, "127.0.0.1:0").start()
    c = Client(srv.address, election_id=1)
    try:
        c.connect()
        get = p4runtime_pb2.GetForwardingPipelineConfigRequest(device_id=1)
        cfg = c.stub.GetForwardingPipelineConfig(get, timeout=5).config
        assert cfg.p4info.tables and cfg.p4_device_config == SOURCE
        tables = c.read(p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry()))
        assert [e.table_entry.is_const for e in tables] == [True]  # the program's const entry
    finally:
        c.close()
        srv.stop(grace=0.2)
