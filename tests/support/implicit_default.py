"""tests/p4runtime/implicit_default.p4 as the rollback tests use it: its entries and the state a rolled
back batch must leave unchanged."""

from __future__ import annotations

from pathlib import Path

from p4.v1 import p4runtime_pb2

SOURCE = (Path(__file__).resolve().parents[1] / "p4runtime" / "implicit_default.p4").read_bytes()
W = p4runtime_pb2.WriteRequest
ALL_OR_NOTHING = [W.ROLLBACK_ON_ERROR, W.DATAPLANE_ATOMIC]
Entity = p4runtime_pb2.Entity


def entry(ident, dst: int, port: int) -> p4runtime_pb2.TableEntry:
    e = p4runtime_pb2.TableEntry(table_id=ident("tables", "MyIngress.fwd"))
    e.match.add(field_id=1).exact.value = dst.to_bytes(6, "big")
    a = e.action.action
    a.action_id = ident("actions", "MyIngress.set_port")
    a.params.add(param_id=1, value=bytes([port]))
    return e


def table_state(c, ident):
    """Entries, default entry and counter as bytes: what must be unchanged after a rollback."""
    tid = ident("tables", "MyIngress.fwd")
    entries = sorted(e.SerializeToString() for e in c.read(Entity(table_entry={"table_id": tid})))
    default = [e.SerializeToString()
               for e in c.read(Entity(table_entry={"table_id": tid, "is_default_action": True}))]
    counter = [e.SerializeToString() for e in c.read(Entity(counter_entry={
        "counter_id": ident("counters", "MyIngress.hits"), "index": {"index": 0}}))]
    return entries, default, counter
