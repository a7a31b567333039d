"""The fast write path (simple table entries read from the wire) answers exactly as the general one.

Two servers with the same program get the same seeded batches of valid and broken updates; one
has the fast path switched off. Per-update codes and messages, and everything a Read returns,
must be identical.
"""

from __future__ import annotations

import random
from pathlib import Path

import grpc
import pytest
from p4.v1 import p4runtime_pb2 as pb

from p4exec.p4runtime import P4RuntimeServer, fastpath
from p4exec.switch.inprocess import InProcessDevice
from p4exec.v1model.loader import load_config
from tests.support.p4rt_client import Client, U, write_errors

SOURCE = (Path(__file__).parent / "fastpath.p4").read_bytes()
P4INFO = load_config(SOURCE).p4info
TABLES = {t.preamble.name.split(".")[-1]: t for t in P4INFO.tables}
ACTIONS = {a.preamble.name.split(".")[-1]: a for a in P4INFO.actions}


class GeneralOnly(InProcessDevice):
    pass


@pytest.fixture
def pair(monkeypatch):
    real_decode, real_commit = fastpath.decode, fastpath.commit
    general = P4RuntimeServer(GeneralOnly(device_id=1), "127.0.0.1:0").start()
    fast = P4RuntimeServer(InProcessDevice(device_id=1), "127.0.0.1:0").start()
    used = []  # per update of the fast server: did the fast path apply it?

    def decode(ctx, buf, spans):
        if isinstance(ctx.device, GeneralOnly):
            return [None] * len(spans)
        items = real_decode(ctx, buf, spans)
        used.extend(False for item in items if item is None)
        return items

    def commit(item):
        ok = real_commit(item)
        used.append(ok)
        return ok

    monkeypatch.setattr(fastpath, "decode", decode)
    monkeypatch.setattr(fastpath, "commit", commit)
    clients = []
    for srv in (general, fast):
        c = Client(srv.address, election_id=1)
        c.connect()
        c.set_pipeline(P4INFO, SOURCE)
        clients.append(c)
    yield clients, used
    for c in clients:
        c.close()
    general.stop(0.5)
    fast.stop(0.5)


def rand_bytes(rnd: random.Random, width: int) -> bytes:
    roll = rnd.random()
    if roll < 0.05:
        return b""
    if roll < 0.12:
        return (1 << width).to_bytes((width + 8) // 8, "big")  # one bit too many
    v = rnd.getrandbits(width)
    n = (width + 7) // 8 + (1 if roll < 0.2 else 0)  # sometimes a leading zero byte
    return v.to_bytes(n, "big")


def random_entry(rnd: random.Random) -> pb.TableEntry:
    name = rnd.choice(["routes", "routes", "acl", "hosts"])
    t = TABLES[name]
    e = pb.TableEntry(table_id=t.preamble.id if rnd.random() > 0.03 else 0x7777)
    for mf in t.match_fields:
        if rnd.random() < 0.05:
            continue  # missing (fine for don't-care kinds)
        fm = e.match.add(field_id=mf.id if rnd.random() > 0.03 else 99)
        w = mf.bitwidth
        small = rnd.randrange(4)
        if mf.match_type == mf.EXACT:
            fm.exact.value = small.to_bytes(2, "big") if rnd.random() < 0.7 else rand_bytes(rnd, w)
        elif mf.match_type == mf.LPM:
            plen = rnd.choice([0, 8, 16, 24, 48, 49]) if rnd.random() < 0.2 else 24
            value = (small << 24) if rnd.random() < 0.8 else rnd.getrandbits(w)
            fm.lpm.value = value.to_bytes(6, "big")
            fm.lpm.prefix_len = plen
        elif mf.match_type == mf.TERNARY:
            mask = rnd.choice([0, 0xFFFF00000000, (1 << w) - 1])
            fm.ternary.value = ((small << 32) & mask if rnd.random() < 0.8 else small).to_bytes(6, "big")
            fm.ternary.mask = mask.to_bytes(6, "big")
        elif mf.match_type == mf.RANGE:
            lo, hi = sorted(rnd.sample(range(0, 1 << 16), 2)) if rnd.random() < 0.85 else (9, 3)
            fm.range.low, fm.range.high = lo.to_bytes(2, "big"), hi.to_bytes(2, "big")
        else:
            fm.optional.value = small.to_bytes(2, "big")
    if name == "acl":
        e.priority = rnd.choice([1, 5, 10]) if rnd.random() < 0.9 else 0
    elif rnd.random() < 0.05:
        e.priority = 3
    if name == "hosts" and rnd.random() < 0.5:
        e.idle_timeout_ns = 10**9
    elif rnd.random() < 0.03:
        e.idle_timeout_ns = 5
    if rnd.random() < 0.2:
        e.controller_metadata = rnd.getrandbits(20)
    if rnd.random() < 0.2:
        e.metadata = b"cookie"
    if rnd.random() < 0.95:
        act = ACTIONS[rnd.choice(["fwd", "fwd", "drop", "miss", "NoAction"])]
        a = e.action.action
        a.action_id = act.preamble.id
        for p in act.params:
            if rnd.random() < 0.03:
                continue
            a.params.add(param_id=p.id if rnd.random() > 0.02 else 9, value=rand_bytes(rnd, p.bitwidth))
        if rnd.random() < 0.02:
            a.params.add(param_id=1, value=b"\x01")
    return e


def read_all(c: Client) -> list[bytes]:
    out = []
    for t in P4INFO.tables:
        req = pb.TableEntry(table_id=t.preamble.id)
        out += sorted(e.table_entry.SerializeToString() for e in c.read(pb.Entity(table_entry=req)))
    return out


def test_fast_and_general_paths_agree(pair) -> None:
    (general, fast), used = pair
    rnd = random.Random(11)
    failures = 0
    for _ in range(12):
        batch = [pb.Update(type=rnd.choice([U.INSERT, U.INSERT, U.INSERT, U.MODIFY, U.DELETE]),
                           entity=pb.Entity(table_entry=random_entry(rnd))) for _ in range(120)]
        answers = []
        for c in (general, fast):
            try:
                c.write(*batch)
                answers.append([])
            except grpc.RpcError as err:
                answers.append(write_errors(err))
        assert answers[0] == answers[1]
        failures += sum(1 for code, _ in answers[0] if code)
        assert read_all(general) == read_all(fast)
    assert sum(used) > 100, "the fast path took (almost) nothing"
    assert not all(used), "nothing fell back to the general path"
    assert read_all(fast)  # the batches left entries behind
    assert 100 < failures < 12 * 120 - 100, failures  # both accepted and refused updates
