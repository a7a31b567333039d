"""Seeded fuzz of the P4Runtime server, model-checked against Read (issue 15, Acceptance).

A compiled program (fuzz.p4) runs on the embedded server behind real gRPC. Each request is a Write
of 1-4 updates (valid ones and mutated ones, every entity kind, mixed atomicity modes), a Read
edge case, or a SetForwardingPipelineConfig edge case. The test keeps its own model of what must be
installed; it knows what every update must do (succeed, or fail with which codes: a mutation must be
refused, a duplicate INSERT is ALREADY_EXISTS, a DELETE of an absent entry NOT_FOUND, a full table
RESOURCE_EXHAUSTED; an all-or-nothing batch with one failure changes nothing). After every few
requests a full Read must equal the model. INTERNAL, UNKNOWN-without-details or a dead server fail.

    FUZZ_P4RT_REQUESTS=50000 FUZZ_P4RT_SEED=7 .venv/bin/python -m pytest tests/p4runtime/test_fuzz_model.py
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2 as pb

from p4exec.v1model.loader import load_config
from tests.support.p4rt_client import U, write_errors

SOURCE = (Path(__file__).parent / "fuzz.p4").read_bytes()
P4INFO = load_config(SOURCE).p4info
REQUESTS = int(os.environ.get("FUZZ_P4RT_REQUESTS", "5000"))
SEED = int(os.environ.get("FUZZ_P4RT_SEED", "20261201"))
CHECK_EVERY = 20  # requests between two full Reads
PIPELINE_EVERY = 400  # a pipeline request (most compile the program: ~1 s each on a loaded machine)
W = pb.WriteRequest
MODES = [W.CONTINUE_ON_ERROR, W.CONTINUE_ON_ERROR, W.ROLLBACK_ON_ERROR, W.DATAPLANE_ATOMIC]
# What a refused mutation may be answered with: the spec's codes for a bad request, and those of the
# state (a broken INSERT of an existing id may be refused for either reason; the spec sets no order).
REFUSED = {code_pb2.INVALID_ARGUMENT, code_pb2.OUT_OF_RANGE, code_pb2.NOT_FOUND, code_pb2.PERMISSION_DENIED,
           code_pb2.UNIMPLEMENTED, code_pb2.FAILED_PRECONDITION, code_pb2.ALREADY_EXISTS,
           code_pb2.RESOURCE_EXHAUSTED}
OK = frozenset({code_pb2.OK})

TABLES = {t.preamble.name.split(".")[-1]: t for t in P4INFO.tables}
ACTIONS = {a.preamble.id: a for a in P4INFO.actions}
COUNTER = next(c for c in P4INFO.counters if c.preamble.name.endswith("port_hits"))
REGISTER = P4INFO.registers[0]
METER = P4INFO.meters[0]
PROFILE = P4INFO.action_profiles[0]
MISS = next(a.preamble.id for a in P4INFO.actions if a.preamble.name.endswith("miss"))
DIRECT = [TABLES["routes"], TABLES["acl"]]  # modeled tables (direct actions)


def canon(v: int) -> bytes:
    return v.to_bytes(max(1, (v.bit_length() + 7) // 8), "big")


def ser(msg) -> bytes:
    return msg.SerializeToString(deterministic=True)


@dataclass
class Model:
    """What must be installed, as the serialized canonical entities a Read returns."""

    entries: dict[tuple, bytes] = field(default_factory=dict)  # (table id, match, priority) -> entry
    default: bytes | None = None  # routes' default action, None: the program's
    counters: dict[int, tuple[int, int]] = field(default_factory=dict)
    mcast: dict[int, bytes] = field(default_factory=dict)
    clones: dict[int, bytes] = field(default_factory=dict)

    def copy(self) -> Model:
        return Model(dict(self.entries), self.default, dict(self.counters), dict(self.mcast), dict(self.clones))

    def count(self, table_id: int) -> int:
        return sum(1 for k in self.entries if k[0] == table_id)


@dataclass
class Planned:
    """One update and what it must do to the model (None: it must be refused with one of `codes`)."""

    update: pb.Update
    codes: frozenset[int]
    apply: object = None  # callable(Model) or None


class Fuzzer:
    def __init__(self, rnd: random.Random) -> None:
        self.r = rnd

    # ------------------------------------------------------------------------- valid entities
    def value(self, width: int) -> int:
        r = self.r
        return r.choice([0, 1, 2, 3, (1 << width) - 1, r.getrandbits(width) & 0xF])

    def match(self, table) -> tuple[list[pb.FieldMatch], int]:
        r = self.r
        out = []
        for mf in table.match_fields:
            w = mf.bitwidth
            fm = pb.FieldMatch(field_id=mf.id)
            if mf.match_type == mf.EXACT:
                fm.exact.value = canon(self.value(w))
            elif mf.match_type == mf.LPM:
                plen = r.choice([0, 4, 8, w])
                if plen == 0:
                    continue  # don't care: omitted
                fm.lpm.value = canon(self.value(w) & (((1 << plen) - 1) << (w - plen)))
                fm.lpm.prefix_len = plen
            elif mf.match_type == mf.TERNARY:
                mask = r.choice([0, 0xF, (1 << w) - 1])
                if mask == 0:
                    continue
                fm.ternary.value = canon(self.value(w) & mask)
                fm.ternary.mask = canon(mask)
            elif mf.match_type == mf.RANGE:
                lo, hi = sorted((self.value(w), self.value(w)))
                if lo == 0 and hi == (1 << w) - 1:
                    continue
                fm.range.low, fm.range.high = canon(lo), canon(hi)
            else:  # optional
                if r.random() < 0.4:
                    continue
                fm.optional.value = canon(self.value(w))
            out.append(fm)
        needs_priority = any(mf.match_type in (mf.TERNARY, mf.RANGE, mf.OPTIONAL) for mf in table.match_fields)
        return out, (r.choice([1, 2, 10]) if needs_priority else 0)

    def action(self, action_id: int) -> pb.Action:
        a = pb.Action(action_id=action_id)
        for p in ACTIONS[action_id].params:
            a.params.add(param_id=p.id, value=canon(self.value(p.bitwidth)))
        return a

    def table_entry(self, table) -> pb.TableEntry:
        e = pb.TableEntry(table_id=table.preamble.id)
        matches, e.priority = self.match(table)
        e.match.extend(matches)
        refs = [ref.id for ref in table.action_refs if ref.scope != ref.DEFAULT_ONLY]
        e.action.action.CopyFrom(self.action(self.r.choice(refs)))
        return e

    # --------------------------------------------------------------------------- one update
    def plan(self, m: Model) -> Planned:
        r = self.r
        kind = r.choices(["table", "default", "counter", "mcast", "clone", "junk"], [10, 1, 2, 2, 2, 2])[0]
        return getattr(self, f"plan_{kind}")(m)

    def plan_table(self, m: Model) -> Planned:
        r = self.r
        table = r.choice(DIRECT)
        e = self.table_entry(table)
        key = (e.table_id, tuple(ser(x) for x in sorted(e.match, key=lambda x: x.field_id)), e.priority)
        utype = r.choice([U.INSERT, U.INSERT, U.MODIFY, U.DELETE])
        if r.random() < 0.2:
            return self.mutated_entry(utype, e)
        upd = pb.Update(type=utype, entity=pb.Entity(table_entry=e))
        if utype == U.INSERT:
            if key in m.entries:
                return Planned(upd, frozenset({code_pb2.ALREADY_EXISTS}))
            if m.count(e.table_id) >= table.size:
                return Planned(upd, frozenset({code_pb2.RESOURCE_EXHAUSTED}))
            return Planned(upd, OK, lambda mm: mm.entries.__setitem__(key, ser(e)))
        if key not in m.entries:
            return Planned(upd, frozenset({code_pb2.NOT_FOUND}))
        if utype == U.MODIFY:
            return Planned(upd, OK, lambda mm: mm.entries.__setitem__(key, ser(e)))
        return Planned(upd, OK, lambda mm: mm.entries.pop(key))

    def mutated_entry(self, utype: int, e: pb.TableEntry) -> Planned:
        """An entry broken in one way that makes any update of it invalid."""
        r = self.r
        how = r.randrange(12)
        if how == 0:
            e.table_id = r.choice([0, 0x02FFFFFF, TABLES["ecmp"].preamble.id + 1])
            if e.table_id == 0 and utype != U.INSERT:
                e.table_id = 0x02FFFFFE  # table_id 0 with DELETE would be a (refused) wildcard anyway
        elif how == 1 and e.match:
            fm = r.choice(e.match)
            kind = fm.WhichOneof("field_match_type")
            sub = getattr(fm, kind)
            attr = "low" if kind == "range" else "value"
            setattr(sub, attr, b"\x01" + b"\x00" * 6)  # wider than any field of the program
        elif how == 2 and e.match:
            fm = r.choice(e.match)
            kind = fm.WhichOneof("field_match_type")
            setattr(getattr(fm, kind), "low" if kind == "range" else "value", b"")
        elif how == 3:
            e.match.add(field_id=r.choice([0, 9])).exact.value = b"\x01"
        elif how == 4 and e.match:
            fm = e.match.add()
            fm.CopyFrom(e.match[0])  # the same field twice
        elif how == 5 and utype != U.DELETE:
            e.action.action.action_id = r.choice([0, 0x01FFFFFF, REGISTER.preamble.id])
        elif how == 6 and utype != U.DELETE and e.action.action.params:
            del e.action.action.params[-1]
        elif how == 7 and utype != U.DELETE:
            p = e.action.action.params.add(param_id=77, value=b"\x01")
            p.param_id = 77
        elif how == 8:
            tbl = next(t for t in DIRECT if t.preamble.id == e.table_id)
            if any(mf.match_type == mf.TERNARY for mf in tbl.match_fields):
                e.priority = r.choice([0, -5])
            else:
                e.priority = 3  # priority on a table without ternary/range/optional
        elif how == 9 and e.table_id == TABLES["routes"].preamble.id:
            fm = e.match[0]  # the exact vrf field
            fm.ClearField("exact")
            fm.lpm.value, fm.lpm.prefix_len = b"\x01", 12  # the wrong match kind
        elif how == 10 and utype != U.DELETE:
            e.action.action_profile_member_id = 1  # a member on a direct table
        else:
            return Planned(pb.Update(type=U.UNSPECIFIED, entity=pb.Entity(table_entry=e)), frozenset(REFUSED))
        return Planned(pb.Update(type=utype, entity=pb.Entity(table_entry=e)), frozenset(REFUSED))

    def plan_default(self, m: Model) -> Planned:
        r = self.r
        table = TABLES["routes"]
        e = pb.TableEntry(table_id=table.preamble.id, is_default_action=True)
        choice = r.randrange(6)
        if choice == 0:  # reset to the program's default
            return Planned(pb.Update(type=U.MODIFY, entity=pb.Entity(table_entry=e)), OK,
                           lambda mm: setattr(mm, "default", None))
        if choice == 1:
            e.action.action.action_id = MISS
            e.match.add(field_id=1).exact.value = b"\x01"  # a default entry has no match
            return Planned(pb.Update(type=U.MODIFY, entity=pb.Entity(table_entry=e)), frozenset(REFUSED))
        if choice == 2:
            e.action.action.CopyFrom(self.action(MISS))
            return Planned(pb.Update(type=r.choice([U.INSERT, U.DELETE]), entity=pb.Entity(table_entry=e)),
                           frozenset(REFUSED))
        e.action.action.CopyFrom(self.action(r.choice([ref.id for ref in table.action_refs])))
        stored = ser(e.action.action)
        return Planned(pb.Update(type=U.MODIFY, entity=pb.Entity(table_entry=e)), OK,
                       lambda mm: setattr(mm, "default", stored))

    def plan_counter(self, m: Model) -> Planned:
        r = self.r
        c = pb.CounterEntry(counter_id=COUNTER.preamble.id)
        c.index.index = r.randrange(COUNTER.size)
        c.data.packet_count, c.data.byte_count = r.randrange(100), r.randrange(10_000)
        idx, data = c.index.index, (c.data.packet_count, c.data.byte_count)
        bad = r.randrange(6)
        if bad == 0:
            c.index.index = r.choice([COUNTER.size, 1 << 40])
        elif bad == 1:
            c.counter_id = r.choice([0x12FFFFFF, METER.preamble.id])
        elif bad == 2:
            return Planned(pb.Update(type=r.choice([U.INSERT, U.DELETE]), entity=pb.Entity(counter_entry=c)),
                           frozenset(REFUSED))
        else:
            return Planned(pb.Update(type=U.MODIFY, entity=pb.Entity(counter_entry=c)), OK,
                           lambda mm: mm.counters.__setitem__(idx, data))
        return Planned(pb.Update(type=U.MODIFY, entity=pb.Entity(counter_entry=c)), frozenset(REFUSED))

    def replicas(self, msg, bad: bool) -> None:
        ports = self.r.sample(range(1, 6), self.r.randint(1, 3))
        for p in ports:
            msg.replicas.add(egress_port=p, instance=self.r.choice([0, 1]))
        if bad:
            msg.replicas.add().CopyFrom(msg.replicas[0])  # a duplicate replica

    def plan_mcast(self, m: Model) -> Planned:
        return self._pre(m, "multicast_group_entry", "multicast_group_id", m.mcast)

    def plan_clone(self, m: Model) -> Planned:
        return self._pre(m, "clone_session_entry", "session_id", m.clones)

    def _pre(self, m: Model, kind: str, id_field: str, table: dict[int, bytes]) -> Planned:
        r = self.r
        pre = pb.PacketReplicationEngineEntry()
        msg = getattr(pre, kind)
        ident = r.randint(1, 5)
        setattr(msg, id_field, ident)
        utype = r.choice([U.INSERT, U.INSERT, U.MODIFY, U.DELETE])
        bad = r.random() < 0.25
        duplicate = bad and utype != U.DELETE and r.random() < 0.6  # a DELETE needs no replicas
        self.replicas(msg, duplicate)
        if bad and not duplicate:
            setattr(msg, id_field, 0)
        upd = pb.Update(type=utype, entity=pb.Entity(packet_replication_engine_entry=pre))
        if bad:
            return Planned(upd, frozenset(REFUSED))
        read_back = pb.Entity(packet_replication_engine_entry=pre)
        if utype == U.INSERT:
            if ident in table:
                return Planned(upd, frozenset({code_pb2.ALREADY_EXISTS}))
            return Planned(upd, OK, lambda mm: _pre_table(mm, kind).__setitem__(ident, ser(read_back)))
        if ident not in table:
            return Planned(upd, frozenset({code_pb2.NOT_FOUND}))
        if utype == U.MODIFY:
            return Planned(upd, OK, lambda mm: _pre_table(mm, kind).__setitem__(ident, ser(read_back)))
        return Planned(upd, OK, lambda mm: _pre_table(mm, kind).pop(ident))

    def plan_junk(self, m: Model) -> Planned:
        """Every other entity kind, always broken (the model has none of them installed)."""
        r = self.r
        how = r.randrange(10)
        ent = pb.Entity()
        utype = r.choice([U.INSERT, U.MODIFY, U.DELETE])
        if how == 0:
            return Planned(pb.Update(type=utype), frozenset(REFUSED))  # no entity
        if how == 1:
            mem = ent.action_profile_member
            mem.action_profile_id, mem.member_id = r.choice([0x11FFFFFF, COUNTER.preamble.id]), 1
            mem.action.CopyFrom(self.action(TABLES["acl"].action_refs[0].id))
        elif how == 2:
            grp = ent.action_profile_group
            grp.action_profile_id, grp.group_id = PROFILE.preamble.id, r.randint(1, 4)
            grp.members.add(member_id=r.randint(50, 60), weight=1)  # no such member
            utype = r.choice([U.INSERT, U.MODIFY])
        elif how == 3:
            me = ent.meter_entry
            me.meter_id, me.index.index = METER.preamble.id, r.choice([METER.size, 1 << 33])
            me.config.cir, me.config.cburst, me.config.pir, me.config.pburst = 10, 10, 20, 20
            utype = U.MODIFY
        elif how == 4:
            me = ent.meter_entry
            me.meter_id, me.index.index = METER.preamble.id, 0
            me.config.cir, me.config.cburst, me.config.pir, me.config.pburst = 30, 10, 20, 20  # cir > pir
            utype = U.MODIFY
        elif how == 5:
            re = ent.register_entry
            re.register_id, re.index.index = REGISTER.preamble.id, r.choice([REGISTER.size, 99])
            re.data.bitstring = b"\x01"
            utype = U.MODIFY
        elif how == 6:
            ent.digest_entry.digest_id = 0x17FFFFFF
        elif how == 7:
            ent.value_set_entry.value_set_id = 0x03FFFFFF
            utype = U.MODIFY
        elif how == 8:
            e = self.table_entry(TABLES["ecmp"])
            ent.table_entry.CopyFrom(e)  # a direct action on a table with an action selector
            utype = r.choice([U.INSERT, U.MODIFY])
        else:
            dc = ent.direct_counter_entry
            dc.table_entry.table_id = TABLES["ecmp"].preamble.id  # no direct counter there
            dc.table_entry.match.add(field_id=1).exact.value = b"\x01"
            utype = U.MODIFY
        return Planned(pb.Update(type=utype, entity=ent), frozenset(REFUSED))


def _pre_table(m: Model, kind: str) -> dict[int, bytes]:
    return m.mcast if kind == "multicast_group_entry" else m.clones


# ------------------------------------------------------------------------------ checking
def expected_read(m: Model) -> dict[str, list[bytes]]:
    default = pb.TableEntry(table_id=TABLES["routes"].preamble.id, is_default_action=True)
    if m.default is None:
        default.action.action.CopyFrom(pb.Action.FromString(ser(_initial_default())))
    else:
        default.action.action.CopyFrom(pb.Action.FromString(m.default))
    counters = []
    for i in range(COUNTER.size):
        c = pb.CounterEntry(counter_id=COUNTER.preamble.id)
        c.index.index = i
        c.data.packet_count, c.data.byte_count = m.counters.get(i, (0, 0))
        counters.append(ser(pb.Entity(counter_entry=c)))
    return {
        "entries": sorted(m.entries.values()),
        "default": [ser(pb.Entity(table_entry=default))],
        "counters": sorted(counters),
        "mcast": sorted(m.mcast.values()),
        "clones": sorted(m.clones.values()),
        "members": [],
        "groups": [],
    }


def _initial_default() -> pb.Action:
    init = TABLES["routes"].initial_default_action
    return pb.Action(action_id=init.action_id)


def full_read(c) -> dict[str, list[bytes]]:
    """Everything the model covers, in one ReadRequest (wildcards per kind)."""
    mc = pb.Entity()
    mc.packet_replication_engine_entry.multicast_group_entry.SetInParent()
    cl = pb.Entity()
    cl.packet_replication_engine_entry.clone_session_entry.SetInParent()
    asked = [pb.Entity(table_entry=pb.TableEntry(table_id=t.preamble.id)) for t in DIRECT] + [
        pb.Entity(table_entry=pb.TableEntry(table_id=TABLES["routes"].preamble.id, is_default_action=True)),
        pb.Entity(counter_entry=pb.CounterEntry(counter_id=COUNTER.preamble.id)), mc, cl,
        pb.Entity(action_profile_member=pb.ActionProfileMember(action_profile_id=PROFILE.preamble.id)),
        pb.Entity(action_profile_group=pb.ActionProfileGroup(action_profile_id=PROFILE.preamble.id))]
    got: dict[str, list[bytes]] = {k: [] for k in ("entries", "default", "counters", "mcast", "clones",
                                                   "members", "groups")}
    for ent in c.read(*asked):
        kind = ent.WhichOneof("entity")
        if kind == "table_entry":
            if ent.table_entry.is_default_action:
                got["default"].append(ser(ent))
            else:
                got["entries"].append(ser(ent.table_entry))
        elif kind == "counter_entry":
            got["counters"].append(ser(ent))
        elif kind == "packet_replication_engine_entry":
            pre = ent.packet_replication_engine_entry
            got["mcast" if pre.WhichOneof("type") == "multicast_group_entry" else "clones"].append(ser(ent))
        else:
            got["members" if kind == "action_profile_member" else "groups"].append(ser(ent))
    return {k: sorted(v) for k, v in got.items()}


def rpc_codes(err: grpc.RpcError, n: int) -> list[int]:
    """Per-update codes of a failed Write; the RPC code must be UNKNOWN with one p4.Error each."""
    assert err.code() == grpc.StatusCode.UNKNOWN, (err.code(), err.details())
    codes = [code for code, _ in write_errors(err)]
    assert len(codes) == n, (codes, n)
    return codes


@dataclass
class Stats:
    writes: int = 0
    updates: int = 0
    refused: int = 0
    reads: int = 0
    pipelines: int = 0
    checks: int = 0


def run_write(c, fz: Fuzzer, model: Model, st: Stats) -> Model:
    r = fz.r
    mode = r.choice(MODES)
    work = model.copy()
    plans = []
    for _ in range(r.randint(1, 4)):
        p = fz.plan(work)
        plans.append(p)
        if p.apply is not None:
            p.apply(work)  # later updates of the batch see it (the server applies them in order)
    req = W(device_id=1, atomicity=mode)
    req.election_id.low = c.election_id
    req.updates.extend(p.update for p in plans)
    st.writes += 1
    st.updates += len(plans)
    try:
        c.stub.Write(req, timeout=30)
        codes = [code_pb2.OK] * len(plans)
    except grpc.RpcError as err:
        codes = rpc_codes(err, len(plans))
    st.refused += sum(1 for x in codes if x != code_pb2.OK)
    failing = [i for i, p in enumerate(plans) if p.codes != OK]
    if mode != W.CONTINUE_ON_ERROR and failing:
        # all or nothing: the first refused update says why, the others were rolled back / not tried
        first = failing[0]
        assert codes[first] in plans[first].codes, (first, codes, plans[first].update)
        assert all(x == code_pb2.ABORTED for i, x in enumerate(codes) if i != first), codes
        return model
    for i, (p, got) in enumerate(zip(plans, codes, strict=True)):
        assert got in p.codes, (i, got, sorted(p.codes), p.update)
    return work


def run_read_edge(c, fz: Fuzzer, st: Stats) -> None:
    r = fz.r
    ent = pb.Entity()
    how = r.randrange(6)
    if how == 0:
        ent.table_entry.table_id = 0x02FFFFFF
    elif how == 1:
        ent.counter_entry.counter_id = 0x12FFFFFF
    elif how == 2:
        ent.counter_entry.counter_id = COUNTER.preamble.id
        ent.counter_entry.index.index = COUNTER.size + r.randrange(5)
    elif how == 3:
        ent.register_entry.register_id = REGISTER.preamble.id
        ent.register_entry.index.index = 1 << 35
    elif how == 4:
        ent.table_entry.table_id = TABLES["routes"].preamble.id
        ent.table_entry.match.add(field_id=1).exact.value = b"\x01\x00\x00"  # wider than 12 bits
    else:
        pass  # an Entity with nothing set
    st.reads += 1
    req = pb.ReadRequest(device_id=r.choice([1, 1, 1, 2]))
    req.entities.append(ent)
    with pytest.raises(grpc.RpcError) as exc:
        list(c.stub.Read(req, timeout=30))
    code = exc.value.code()
    if req.device_id != 1:
        assert code == grpc.StatusCode.NOT_FOUND, (code, exc.value.details())
        return
    assert code == grpc.StatusCode.UNKNOWN, (code, exc.value.details(), ent)
    codes = [x for x, _ in write_errors(exc.value)]
    assert len(codes) == 1 and codes[0] in REFUSED, (codes, ent)


def run_pipeline_edge(c, fz: Fuzzer, model: Model, st: Stats) -> Model:
    """Pipeline requests that must be refused (state kept), VERIFY (kept) or a re-commit (state reset)."""
    r = fz.r
    A = pb.SetForwardingPipelineConfigRequest
    req = A(device_id=1, action=A.VERIFY)
    req.election_id.low = c.election_id
    req.config.p4info.CopyFrom(P4INFO)
    req.config.p4_device_config = SOURCE
    how = r.randrange(8)
    expect = grpc.StatusCode.INVALID_ARGUMENT
    if how == 0:
        req.action = A.UNSPECIFIED
    elif how == 1:
        req.config.p4_device_config = b"control { syntax error"
    elif how == 2:
        req.config.p4info.tables[0].preamble.id = req.config.p4info.tables[1].preamble.id  # duplicate id
    elif how == 3:
        req.device_id = 9
        expect = grpc.StatusCode.NOT_FOUND
    elif how == 4:
        req.election_id.low = c.election_id + 5
        expect = grpc.StatusCode.PERMISSION_DENIED
    elif how == 5:
        expect = grpc.StatusCode.OK  # VERIFY of the running program: nothing changes
    elif how == 6:
        req.action = A.RECONCILE_AND_COMMIT
        expect = grpc.StatusCode.OK  # the same program: every entry stays
    else:
        req.action = A.VERIFY_AND_COMMIT
        expect = grpc.StatusCode.OK  # a fresh pipeline: empty state
        model = Model()
    st.pipelines += 1
    try:
        c.stub.SetForwardingPipelineConfig(req, timeout=120)
        got = grpc.StatusCode.OK
    except grpc.RpcError as err:
        got = err.code()
        assert got not in (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN), err.details()
    assert got == expect, (how, got, expect)
    return model


@pytest.mark.slow  # ~10-17 s of hypothesis examples: in `make test`, not in `make test-fast`
def test_fuzzed_requests_match_the_model(make_client):
    c = make_client(election_id=1)
    c.connect()
    c.set_pipeline(P4INFO, SOURCE)
    fz = Fuzzer(random.Random(SEED))
    model = Model()
    st = Stats()
    for n in range(1, REQUESTS + 1):
        if n % PIPELINE_EVERY == 0:
            model = run_pipeline_edge(c, fz, model, st)
        elif fz.r.random() < 0.92:
            model = run_write(c, fz, model, st)
        else:
            run_read_edge(c, fz, st)
        if n % CHECK_EVERY == 0 or n == REQUESTS:
            st.checks += 1
            assert full_read(c) == expected_read(model), f"request {n} (seed {SEED})"
    print(f"fuzz seed {SEED}: {REQUESTS} requests ({st.writes} Writes with {st.updates} updates, "
          f"{st.refused} refused; {st.reads} Reads; {st.pipelines} pipeline requests); {st.checks} full Reads "
          f"matched the model; {len(model.entries)} entries installed at the end")
    assert st.refused > st.updates // 10 and len(model.entries) > 0  # both kinds of update were exercised
