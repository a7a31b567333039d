"""Errors that always arrive: bounded messages, bounded memory, per-update details within gRPC's limits."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2

from controller.client import SwitchConnection
from controller.errors import WriteError
from p4exec.p4runtime.errors import DETAILS_BUDGET, max_updates
from p4exec.v1model.loader import load_config
from tests.support.p4rt_client import U, update, write_errors

SOURCE = (Path(__file__).resolve().parents[2] / "bench" / "lpm64k.p4").read_bytes()
P4INFO = load_config(SOURCE).p4info
TABLE = next(t for t in P4INFO.tables if t.preamble.name == "MyIngress.routes")
ACTION = next(a for a in P4INFO.actions if a.preamble.name == "MyIngress.set_nhop")


@pytest.fixture
def routes(make_client):
    c = make_client(election_id=1)
    c.connect()
    c.set_pipeline(P4INFO, SOURCE)
    return c


def route(i: int, port: bytes = b"\x01") -> p4runtime_pb2.Update:
    e = p4runtime_pb2.TableEntry(table_id=TABLE.preamble.id)
    m = e.match.add(field_id=1)
    m.lpm.value = (0x0A000000 | (i << 8)).to_bytes(4, "big")
    m.lpm.prefix_len = 24
    a = e.action.action
    a.action_id = ACTION.preamble.id
    a.params.add(param_id=1, value=b"\x02")
    a.params.add(param_id=2, value=port)
    return update(U.INSERT, table_entry=e)


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_out_of_range_message_does_not_echo_the_value(routes):
    with pytest.raises(grpc.RpcError) as exc:
        routes.write(route(1, port=b"\xff" * (1 << 20)))
    [(code, message)] = write_errors(exc.value)
    assert code == code_pb2.OUT_OF_RANGE
    assert len(message) < 300 and "1048576-byte value" in message


def test_rejected_big_writes_do_not_grow_memory(routes):
    def rejected():
        with pytest.raises(grpc.RpcError):
            routes.write(route(1, port=b"\xff" * (1 << 20)))

    for _ in range(40):  # warm-up: buffers, caches and the gRPC threads' malloc arenas reach their size
        rejected()
    before = rss_kib()
    for _ in range(60):
        rejected()
    grown_mib = (rss_kib() - before) / 1024
    assert grown_mib < 45, f"{grown_mib:.0f} MiB more after 60 rejected writes"  # was ~2 MiB per write


def test_every_failure_of_the_largest_batch_reaches_a_default_client(routes):
    n = max_updates(DETAILS_BUDGET)  # 360: whatever fails, every failure fits gRPC's default limits
    failing = set(range(0, n, 2))  # a 3-byte value for a 9-bit port
    batch = [route(i, port=b"\x01\x00\x00" if i in failing else b"\x01") for i in range(n)]
    with pytest.raises(grpc.RpcError) as exc:
        routes.write(*batch)
    assert exc.value.code() == grpc.StatusCode.UNKNOWN
    errors = write_errors(exc.value)
    assert len(errors) == n
    assert {i for i, (code, _) in enumerate(errors) if code != code_pb2.OK} == failing
    assert all(errors[i][0] == code_pb2.OUT_OF_RANGE for i in failing)
    assert errors[0][1]  # the first failures keep their message
    assert f"{len(failing)} of {n} updates failed" in exc.value.details()


def test_all_failing_largest_batch_reaches_a_default_client(routes):
    n = max_updates(DETAILS_BUDGET)
    with pytest.raises(grpc.RpcError) as exc:
        routes.write(*[route(i, port=b"\x01\x00\x00") for i in range(n)])
    errors = write_errors(exc.value)
    assert len(errors) == n and all(code == code_pb2.OUT_OF_RANGE for code, _ in errors)


def test_a_batch_whose_failures_might_not_fit_is_refused_whole(routes):
    """One update more than a default client can be told about: RESOURCE_EXHAUSTED, nothing applied."""
    n = max_updates(DETAILS_BUDGET) + 1
    with pytest.raises(grpc.RpcError) as exc:
        routes.write(*[route(i) for i in range(n)])
    assert exc.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert f"at most {n - 1} per Write" in exc.value.details()
    entry = p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry(table_id=TABLE.preamble.id))
    assert routes.read(entry) == []


@pytest.mark.slow  # ~5 s CPU; the fast tier keeps the 500-update case below (one Write over the default limit)
def test_every_failure_of_a_big_batch_is_identified_by_the_controller(server):
    """12,000 updates, 6,000 failing (issue 34: after ~374 no failure could be identified)."""
    conn = SwitchConnection(server.address, device_id=1, p4info=P4INFO, timeout=120.0)
    conn.connect()
    try:
        conn.set_pipeline(device_config=SOURCE)
        n = 12_000
        batch = [route(i % 40_000, port=b"\x01\x00\x00" if i % 2 else b"\x01") for i in range(n)]
        with pytest.raises(WriteError) as exc:
            conn.write(batch, batch_size=n)  # one Write
        failures = exc.value.failures
        assert [f.index for f in failures] == list(range(1, n, 2))
        assert all(f.code == "OUT_OF_RANGE" for f in failures)
    finally:
        conn.close()


def test_the_controller_sees_every_failure_with_its_message(server):
    """One Write of 500 (the client's batch), more than the 360 whose failures fit gRPC's default limits: the
    controller's larger status-details budget at work, in the fast tier; the 12,000-update case is in `slow`."""
    conn = SwitchConnection(server.address, device_id=1, p4info=P4INFO, timeout=30.0)
    conn.connect()
    try:
        conn.set_pipeline(device_config=SOURCE)
        batch = [route(i, port=b"\x01\x00\x00" if i % 2 else b"\x01") for i in range(500)]
        assert len(batch) > max_updates(DETAILS_BUDGET)  # more than a default client could be told about
        with pytest.raises(WriteError) as exc:
            conn.write(batch)
        failures = exc.value.failures
        assert [f.index for f in failures] == list(range(1, 500, 2))
        assert all(f.code == "OUT_OF_RANGE" and "does not fit" in f.message for f in failures)
    finally:
        conn.close()
