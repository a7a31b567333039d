"""Property test: random (mostly malformed) table writes never break the server, every
update gets a spec error code, and Read shows exactly the accepted entries."""

from __future__ import annotations

import grpc
from google.rpc import code_pb2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from p4.v1 import p4runtime_pb2

from tests.support.p4rt_client import U, update, write_errors
from tests.support.p4rt_fixture import A_DROP, A_SET_PORT, T_ACL

ALLOWED = {code_pb2.OK, code_pb2.INVALID_ARGUMENT, code_pb2.OUT_OF_RANGE, code_pb2.NOT_FOUND,
           code_pb2.ALREADY_EXISTS, code_pb2.RESOURCE_EXHAUSTED, code_pb2.UNIMPLEMENTED}

small_bytes = st.binary(min_size=0, max_size=6)


@st.composite
def field_matches(draw):
    fm = p4runtime_pb2.FieldMatch(field_id=draw(st.integers(0, 5)))
    kind = draw(st.sampled_from(["exact", "ternary", "lpm", "range", "optional"]))
    if kind == "exact":
        fm.exact.value = draw(small_bytes)
    elif kind == "optional":
        fm.optional.value = draw(small_bytes)
    elif kind == "ternary":
        fm.ternary.value, fm.ternary.mask = draw(small_bytes), draw(small_bytes)
    elif kind == "lpm":
        fm.lpm.value, fm.lpm.prefix_len = draw(small_bytes), draw(st.integers(-1, 40))
    else:
        fm.range.low, fm.range.high = draw(small_bytes), draw(small_bytes)
    return fm


@st.composite
def acl_updates(draw):
    e = p4runtime_pb2.TableEntry(table_id=draw(st.sampled_from([T_ACL, T_ACL, 0x02FFFFFF])),
                                 priority=draw(st.integers(-1, 3)))
    e.match.extend(draw(st.lists(field_matches(), max_size=4)))
    if draw(st.booleans()):
        e.action.action.action_id = draw(st.sampled_from([A_SET_PORT, A_DROP, 0x01FFFFFF]))
        for pid in draw(st.lists(st.integers(0, 2), max_size=2)):
            e.action.action.params.add(param_id=pid, value=draw(small_bytes))
    return update(draw(st.sampled_from([U.INSERT, U.MODIFY, U.DELETE, U.UNSPECIFIED])), table_entry=e)


def read_acl(c):
    entries = c.read(p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry(table_id=T_ACL)))
    return sorted(e.table_entry.SerializeToString(deterministic=True) for e in entries)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batch=st.lists(acl_updates(), min_size=1, max_size=6))
def test_random_writes_keep_server_consistent(primary, batch):
    before = read_acl(primary)
    try:
        primary.write(*batch)
        codes = [code_pb2.OK] * len(batch)
    except grpc.RpcError as err:
        assert err.code() == grpc.StatusCode.UNKNOWN
        codes = [code for code, _ in write_errors(err)]
    assert len(codes) == len(batch)
    assert set(codes) <= ALLOWED, codes
    after = read_acl(primary)
    if all(c != code_pb2.OK for c in codes):
        assert after == before  # nothing accepted: nothing changed
    # whatever was accepted reads back in canonical form (no leading zero bytes)
    for raw in after:
        e = p4runtime_pb2.TableEntry.FromString(raw)
        values = [v for m in e.match for v in _match_values(m)]
        values += [p.value for p in e.action.action.params]
        assert all(v == _canonical(v) for v in values)


def _match_values(m: p4runtime_pb2.FieldMatch) -> list[bytes]:
    kind = m.WhichOneof("field_match_type")
    sub = getattr(m, kind)
    return [getattr(sub, f.name) for f in sub.DESCRIPTOR.fields if f.type == f.TYPE_BYTES]


def _canonical(v: bytes) -> bytes:
    n = int.from_bytes(v, "big")
    return n.to_bytes(max(1, (n.bit_length() + 7) // 8), "big")
