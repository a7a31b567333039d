"""The two rollback defects of issue 15 item 5, against a `p4exec switch` process over gRPC.

test_atomic.py checks them on the embedded server with packets; here the same batches go to the
switch a fabric runs (its writes take the data-plane thread), and every check is a Read.
"""

from __future__ import annotations

import itertools
import sys

import grpc
import pytest
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2

from p4exec.switch.lab import SwitchProcess
from p4exec.v1model.loader import load_config
from tests.support.implicit_default import ALL_OR_NOTHING, SOURCE, entry, table_state
from tests.support.p4rt_client import Client, U, atomic_write, update, write_errors
from tests.support.switch import free_port


@pytest.fixture(scope="module", params=["p4info as compiled", "NoAction not in action_refs"])
def switch_addr(request):
    """One switch per P4Info: a switch running a program refuses a P4Info that differs from it."""
    addr = f"127.0.0.1:{free_port()}"
    proc = SwitchProcess([sys.executable, "-m", "p4exec.switch", "--no-p4", "--device-id", "1",
                          "--grpc-server-addr", addr, "--grpc-allow-local-users", "--log-console", "-L", "warn"])
    try:
        proc.wait_ready(120)
        yield addr, request.param
    finally:
        proc.close()


def without_noaction_ref(p4info):
    """The P4Info as issue 15 saw it: fwd's implicit default NoAction not among its action_refs. p4exec
    and p4c now list it there (@defaultonly) and the switch refuses a P4Info that differs from the
    source, so this one goes without a device config (a control-only pipeline)."""
    fwd = next(t for t in p4info.tables if t.preamble.name == "MyIngress.fwd")
    noaction = next(a.preamble.id for a in p4info.actions if a.preamble.name == "NoAction")
    refs = [r for r in fwd.action_refs if r.id != noaction]
    del fwd.action_refs[:]
    fwd.action_refs.extend(refs)
    return p4info


ELECTION = itertools.count(1)  # each test's client outranks the last one's (its stream may linger)


@pytest.fixture
def prog(switch_addr):
    """A primary client of the switch with a fresh pipeline (a commit starts from empty state)."""
    p4info = load_config(SOURCE).p4info
    addr, kind = switch_addr
    c = Client(addr, election_id=next(ELECTION))
    c.connect()
    if kind == "NoAction not in action_refs":
        c.set_pipeline(without_noaction_ref(p4info))
    else:
        c.set_pipeline(p4info, SOURCE)

    def ident(section: str, name: str) -> int:
        return next(o.preamble.id for o in getattr(p4info, section) if o.preamble.name == name)

    yield c, ident
    c.close()


@pytest.mark.parametrize("atomicity", ALL_OR_NOTHING)
def test_switch_update_without_entity_rolls_back(prog, atomicity):
    c, ident = prog
    c.write(update(U.INSERT, table_entry=entry(ident, 0xA, 1)))
    before = table_state(c, ident)
    with pytest.raises(grpc.RpcError) as exc:
        atomic_write(c, atomicity, update(U.INSERT, table_entry=entry(ident, 0xB, 2)),
                     update(U.MODIFY, table_entry=entry(ident, 0xA, 2)),
                     p4runtime_pb2.Update(type=U.INSERT))  # no entity
    assert exc.value.code() == grpc.StatusCode.UNKNOWN
    assert [code for code, _ in write_errors(exc.value)] == [
        code_pb2.ABORTED, code_pb2.ABORTED, code_pb2.INVALID_ARGUMENT]
    assert table_state(c, ident) == before
    assert len(before[0]) == 1  # 0xA only, with its first action


@pytest.mark.parametrize("atomicity", ALL_OR_NOTHING)
def test_switch_rollback_restores_implicit_noaction_default_and_counter(prog, atomicity):
    c, ident = prog
    tid = ident("tables", "MyIngress.fwd")
    counter = p4runtime_pb2.CounterEntry(counter_id=ident("counters", "MyIngress.hits"))
    counter.index.index = 0
    counter.data.packet_count = 3
    c.write(update(U.MODIFY, counter_entry=counter))  # a non-zero value the rollback must bring back
    before = table_state(c, ident)
    counter.data.packet_count = 7
    default = p4runtime_pb2.TableEntry(table_id=tid, is_default_action=True)
    default.action.action.action_id = ident("actions", "MyIngress.drop")
    bad = entry(ident, 0xC, 1)
    bad.action.action.action_id = 0x7777  # no such action: fails after the two changes
    with pytest.raises(grpc.RpcError) as exc:
        atomic_write(c, atomicity, update(U.MODIFY, counter_entry=counter),
                     update(U.MODIFY, table_entry=default), update(U.INSERT, table_entry=bad))
    assert [code for code, _ in write_errors(exc.value)] == [
        code_pb2.ABORTED, code_pb2.ABORTED, code_pb2.NOT_FOUND]
    assert table_state(c, ident) == before
    got = c.read(p4runtime_pb2.Entity(table_entry={"table_id": tid, "is_default_action": True}))
    assert got[0].table_entry.action.action.action_id != ident("actions", "MyIngress.drop")
