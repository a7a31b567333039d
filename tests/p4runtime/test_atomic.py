"""All-or-nothing batches (ROLLBACK_ON_ERROR, DATAPLANE_ATOMIC) over a real compiled program:
every kind of failure rolls back what the batch already did."""

from __future__ import annotations

import grpc
import pytest
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2

from p4exec.v1model.loader import load_config
from tests.support.implicit_default import ALL_OR_NOTHING, SOURCE, entry, table_state
from tests.support.p4rt_client import U, atomic_write, update, write_errors

Entity = p4runtime_pb2.Entity


def frame(dst: int) -> bytes:
    return dst.to_bytes(6, "big") + (0x020000000001).to_bytes(6, "big") + b"\x88\xb5payload!"


@pytest.fixture
def prog(make_client, device):
    p4info = load_config(SOURCE).p4info
    c = make_client(election_id=1)
    c.connect()
    c.set_pipeline(p4info, SOURCE)

    def ident(section: str, name: str) -> int:
        return next(o.preamble.id for o in getattr(p4info, section) if o.preamble.name == name)

    return c, ident, device


@pytest.mark.parametrize("atomicity", ALL_OR_NOTHING)
def test_update_without_entity_rolls_back_the_batch(prog, atomicity):
    c, ident, device = prog
    c.write(update(U.INSERT, table_entry=entry(ident, 0xA, 1)))
    before = table_state(c, ident)
    batch = [update(U.INSERT, table_entry=entry(ident, 0xB, 2)),
             update(U.MODIFY, table_entry=entry(ident, 0xA, 2)),
             p4runtime_pb2.Update(type=U.INSERT)]  # no entity
    with pytest.raises(grpc.RpcError) as exc:
        atomic_write(c, atomicity, *batch)
    assert exc.value.code() == grpc.StatusCode.UNKNOWN
    assert [code for code, _ in write_errors(exc.value)] == [
        code_pb2.ABORTED, code_pb2.ABORTED, code_pb2.INVALID_ARGUMENT]
    assert table_state(c, ident) == before
    assert device.inject(0, frame(0xA)) == [(1, frame(0xA))]  # the data plane agrees
    assert device.inject(0, frame(0xB)) == [(3, frame(0xB))]


@pytest.mark.parametrize("atomicity", ALL_OR_NOTHING)
def test_rollback_restores_an_implicit_noaction_default(prog, atomicity):
    c, ident, device = prog
    tid = ident("tables", "MyIngress.fwd")
    before = table_state(c, ident)
    counter = p4runtime_pb2.CounterEntry(counter_id=ident("counters", "MyIngress.hits"))
    counter.index.index = 0
    counter.data.packet_count = 7
    default = p4runtime_pb2.TableEntry(table_id=tid, is_default_action=True)
    default.action.action.action_id = ident("actions", "MyIngress.drop")
    bad = entry(ident, 0xC, 1)
    bad.action.action.action_id = 0x7777  # no such action: fails
    with pytest.raises(grpc.RpcError) as exc:
        atomic_write(c, atomicity, update(U.MODIFY, counter_entry=counter),
                     update(U.MODIFY, table_entry=default), update(U.INSERT, table_entry=bad))
    codes = [code for code, _ in write_errors(exc.value)]
    assert codes[:2] == [code_pb2.ABORTED, code_pb2.ABORTED] and codes[2] != code_pb2.OK
    assert table_state(c, ident) == before
    # the implicit NoAction is live again: the frame keeps the port the control chose
    assert device.inject(0, frame(0xD)) == [(3, frame(0xD))]
    # and the default can still be changed and reset afterwards
    c.write(update(U.MODIFY, table_entry=default))
    assert device.inject(0, frame(0xD)) == []
    c.write(update(U.MODIFY, table_entry=p4runtime_pb2.TableEntry(table_id=tid, is_default_action=True)))
    assert device.inject(0, frame(0xD)) == [(3, frame(0xD))]
