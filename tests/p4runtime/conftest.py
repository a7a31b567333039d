"""Fixtures: a real P4RuntimeServer on a free loopback port, clients that always close."""

from __future__ import annotations

import pytest

from p4exec.p4runtime import P4RuntimeServer
from p4exec.switch.inprocess import InProcessDevice
from tests.support.p4rt_client import RUNNING, Client
from tests.support.p4rt_fixture import build_p4info


@pytest.fixture
def p4info():
    return build_p4info()


@pytest.fixture
def device():
    return InProcessDevice(device_id=1, cpu_port=255, ports=(1, 2, 3, 4))


@pytest.fixture
def server(device):
    srv = P4RuntimeServer(device, address="127.0.0.1:0").start()
    RUNNING.append(srv)
    yield srv
    RUNNING.remove(srv)
    srv.stop(grace=0.5)


@pytest.fixture
def make_client(server):
    clients: list[Client] = []

    def make(**kw) -> Client:
        c = Client(server.address, **kw)
        clients.append(c)
        return c

    yield make
    for c in clients:
        c.close()


@pytest.fixture
def primary(make_client, p4info):
    """A primary client with the test P4Info pushed (control-only pipeline)."""
    c = make_client(election_id=10)
    c.connect()
    c.set_pipeline(p4info)
    return c
