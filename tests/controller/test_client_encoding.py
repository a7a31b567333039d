"""`SwitchConnection.entry_update` writes the wire format itself: it must give exactly the bytes the protobuf
runtime gives for the same entry (`table_entry` + `Update.SerializeToString`), for every match kind, values in
every form a user writes them, priorities, defaults, members and groups, and the same errors."""

from __future__ import annotations

import random

import pytest
from google.protobuf import text_format
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2 as pb

from controller.client import SwitchConnection

P4INFO = text_format.Parse("""
tables { preamble { id: 33554433 name: "MyIngress.routes" }
  match_fields { id: 1 name: "hdr.ipv4.dstAddr" bitwidth: 32 match_type: LPM }
  match_fields { id: 2 name: "meta.vrf" bitwidth: 12 match_type: EXACT }
  action_refs { id: 16777217 } action_refs { id: 16777218 } size: 1024 }
tables { preamble { id: 33554434 name: "MyIngress.acl" }
  match_fields { id: 1 name: "hdr.ethernet.srcAddr" bitwidth: 48 match_type: TERNARY }
  match_fields { id: 2 name: "hdr.tcp.dport" bitwidth: 16 match_type: RANGE }
  match_fields { id: 3 name: "hdr.ipv4.protocol" bitwidth: 8 match_type: OPTIONAL }
  match_fields { id: 4 name: "hdr.ipv4.srcAddr" bitwidth: 32 match_type: EXACT }
  action_refs { id: 16777217 } action_refs { id: 16777219 } size: 1024 }
actions { preamble { id: 16777217 name: "MyIngress.drop" } }
actions { preamble { id: 16777218 name: "MyIngress.set_nhop" }
  params { id: 1 name: "dmac" bitwidth: 48 } params { id: 2 name: "port" bitwidth: 9 } }
actions { preamble { id: 16777219 name: "MyIngress.mark" }
  params { id: 1 name: "dscp" bitwidth: 6 } params { id: 2 name: "queue" bitwidth: 300 } }
""", p4info_pb2.P4Info())


def _conn() -> SwitchConnection:
    return SwitchConnection("127.0.0.1:1", p4info=P4INFO, name="offline")


def _value(rnd: random.Random, width: int):
    v = rnd.getrandbits(width)
    form = rnd.randrange(3)
    if form == 0:
        return v
    if form == 1:
        return hex(v)
    return v.to_bytes((width + 7) // 8 + rnd.randrange(2), "big")  # sometimes a leading zero byte


def _random_entry(rnd: random.Random) -> dict:
    kind = rnd.choice([pb.Update.INSERT, pb.Update.MODIFY, pb.Update.DELETE])
    if rnd.random() < 0.5:
        length = rnd.randrange(0, 33)
        dst = rnd.choice([f"10.{rnd.randrange(256)}.{rnd.randrange(256)}.0/{length}",
                          (rnd.getrandbits(32), length)])
        match = {"hdr.ipv4.dstAddr": dst, "vrf": _value(rnd, 12)}
        if rnd.random() < 0.3:
            match = dict(reversed(list(match.items())))  # the order given is the order sent
        action = rnd.choice(["drop", "MyIngress.set_nhop", "set_nhop"])
        params = {} if action == "drop" else {"dmac": rnd.choice(["02:00:00:00:00:01", _value(rnd, 48)]),
                                               "port": _value(rnd, 9)}
        return dict(kind=kind, table="routes", match=match, action=action, params=params,
                    default=rnd.random() < 0.05)
    match = {}
    if rnd.random() < 0.8:
        match["hdr.ethernet.srcAddr"] = (_value(rnd, 48), _value(rnd, 48))
    if rnd.random() < 0.8:
        lo = rnd.randrange(1 << 16)
        match["dport"] = (lo, rnd.randrange(lo, 1 << 16))
    if rnd.random() < 0.8:
        match["protocol"] = _value(rnd, 8)
    match["hdr.ipv4.srcAddr"] = rnd.choice(["192.168.1.7", _value(rnd, 32)])
    target = rnd.randrange(3)
    return dict(kind=kind, table="MyIngress.acl", match=match, priority=rnd.choice([0, 1, 1000, 1 << 30]),
                action="mark" if target == 0 else None,
                params={"dscp": _value(rnd, 6), "queue": _value(rnd, 300)} if target == 0 else None,
                member_id=rnd.randrange(5) if target == 1 else None,
                group_id=rnd.randrange(1 << 32) if target == 2 else None)


def _protobuf_bytes(conn: SwitchConnection, kind: int, **entry) -> bytes:
    update = pb.Update(type=kind)
    conn.table_entry(into=update.entity.table_entry, **entry)
    return update.SerializeToString()


def test_entry_updates_are_the_bytes_protobuf_gives() -> None:
    conn = _conn()
    rnd = random.Random(5)
    for _ in range(2000):
        entry = _random_entry(rnd)
        kind = entry.pop("kind")
        encoded = conn.entry_update(kind, **entry)
        assert encoded.raw == _protobuf_bytes(conn, kind, **entry), entry
        assert encoded.type == kind and encoded.entity.table_entry.table_id in (33554433, 33554434)


def test_entry_update_errors_are_the_builders_errors() -> None:
    conn = _conn()
    cases = [
        dict(table="routes", match={"nope": 1}, action="drop"),
        dict(table="nosuch", action="drop"),
        dict(table="routes", match={"vrf": 1 << 12}, action="drop"),
        dict(table="routes", match={"vrf": 1}, action="set_nhop", params={"port": 1}),
        dict(table="routes", match={"vrf": 1}, action="set_nhop", params={"port": 1, "dmac": 2, "x": 3}),
        dict(table="routes", match={"vrf": 1}, action="unknown_action"),
        dict(table="routes", match={"dstAddr": "10.0.0.0/33"}, action="drop"),
    ]
    for case in cases:
        with pytest.raises(Exception) as expected:  # noqa: PT011 - each case its own kind
            conn.table_entry(**case)  # type: ignore[arg-type]
        with pytest.raises(type(expected.value)) as got:
            conn.entry_update(pb.Update.INSERT, **case)  # type: ignore[arg-type]
        assert str(got.value) == str(expected.value), case
