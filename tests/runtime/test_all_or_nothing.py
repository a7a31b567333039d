"""Random write sequences: every rejected operation leaves every runtime object exactly as it was."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from p4exec.runtime import (
    ActionCall,
    CloneSession,
    DeviceState,
    Exact,
    Lpm,
    Range,
    RuntimeOpError,
    TableEntry,
    Ternary,
)


def fingerprint(s: DeviceState):
    """An immutable snapshot of everything a write can touch (cheap: no deep copies)."""
    tables = tuple((n, frozenset((e.match, e.priority, e.action, e.member_id, e.group_id, e.metadata)
                                 for e in t.entries()), t.default_action) for n, t in s.tables.items())
    profs = tuple((n, tuple(p.members.items()),
                   tuple((g, tuple(x.members.items()), x.max_size, x.expanded) for g, x in p.groups.items()),
                   frozenset((k, v) for k, v in p._member_refs.items() if v),
                   frozenset((k, v) for k, v in p._group_refs.items() if v))
                  for n, p in s.action_profiles.items())
    regs = tuple(tuple(r.values) for r in s.registers.values())
    ctrs = tuple((tuple(c.packets), tuple(c.bytes)) for c in s.counters.values())
    meters = tuple(tuple(c.config for c in m.cells) for m in s.meters.values())
    pre = (tuple(s.pre.groups.items()), tuple(s.pre.sessions.items()))
    return (tables, profs, regs, ctrs, meters, pre)


ints = st.one_of(st.integers(0, 9), st.integers(-2, 1 << 33))  # mostly valid indexes/values
port = st.one_of(st.integers(0, 8), st.integers(0, 600))


def fwd_call():
    return st.builds(lambda a, b: ActionCall("MyIngress.ipv4_forward", (a, b)),
                     st.sampled_from([0, 1, 1 << 48]), port)


ACTIONS = st.one_of(fwd_call(), st.just(ActionCall("MyIngress.drop")), st.just(ActionCall("NoAction")),
                    st.builds(lambda p: ActionCall("MyIngress.set_port", (p,)), port))


def op_strategy():
    good_lpm = st.builds(lambda v, p: Lpm(v & (((1 << p) - 1) << (32 - p)), p),
                         st.sampled_from([0x0A000000, 0x0A010000, 0x0B000000]), st.sampled_from([8, 16, 24]))
    bad_lpm = st.builds(Lpm, st.sampled_from([0, 0x0A000001, 1 << 32]), st.integers(0, 33))
    lpm_match = st.tuples(st.one_of(good_lpm, good_lpm, st.none(), bad_lpm))
    acl_match = st.tuples(
        st.one_of(st.none(), st.builds(Ternary, st.sampled_from([0, 0x0800, 0x0801]),
                                       st.sampled_from([0, 0xFF00, 0xFFFF]))),
        st.one_of(st.none(), st.builds(Range, st.integers(0, 20), st.integers(0, 600))),
        st.none())
    ecmp_entry = st.builds(lambda g, m, grp: TableEntry((Exact(g),), member_id=m, group_id=grp),
                           st.integers(0, 3), st.one_of(st.none(), st.integers(0, 4)),
                           st.one_of(st.none(), st.integers(0, 3)))
    return st.one_of(
        st.tuples(st.just("table"), st.just("MyIngress.ipv4_lpm"), st.sampled_from(["insert", "modify", "delete"]),
                  st.builds(TableEntry, lpm_match, st.integers(0, 2), ACTIONS)),
        st.tuples(st.just("table"), st.just("MyIngress.acl"), st.sampled_from(["insert", "modify", "delete"]),
                  st.builds(TableEntry, acl_match, st.integers(0, 3), ACTIONS)),
        st.tuples(st.just("table"), st.just("MyIngress.ecmp"), st.sampled_from(["insert", "modify", "delete"]),
                  ecmp_entry),
        st.tuples(st.just("default"), st.sampled_from(["MyIngress.ipv4_lpm", "MyIngress.mac"]), ACTIONS),
        st.tuples(st.just("member"), st.sampled_from(["insert_member", "modify_member", "delete_member"]),
                  st.integers(0, 4), ACTIONS),
        st.tuples(st.just("group"), st.sampled_from(["insert_group", "modify_group", "delete_group"]),
                  st.integers(0, 3), st.lists(st.tuples(st.integers(0, 4), st.integers(0, 5)), max_size=4)),
        st.tuples(st.just("register"), ints, ints),
        st.tuples(st.just("counter"), ints, ints),
        st.tuples(st.just("meter"), ints, st.tuples(ints, ints, ints, ints)),
        st.tuples(st.just("mcast"), st.sampled_from(["insert_group", "modify_group", "delete_group"]),
                  st.integers(0, 3), st.lists(st.tuples(port, st.integers(0, 2)), max_size=3)),
        st.tuples(st.just("clone"), st.sampled_from(["insert_session", "modify_session"]), st.integers(0, 3),
                  st.integers(0, 9)),
    )


def apply(s: DeviceState, op) -> None:
    kind = op[0]
    if kind == "table":
        getattr(s.tables[op[1]], op[2])(op[3])
    elif kind == "default":
        s.tables[op[1]].set_default(op[2])
    elif kind == "member":
        p = s.action_profiles["MyIngress.ecmp_selector"]
        if op[1] == "delete_member":
            p.delete_member(op[2])
        else:
            getattr(p, op[1])(op[2], op[3])
    elif kind == "group":
        p = s.action_profiles["MyIngress.ecmp_selector"]
        if op[1] == "delete_group":
            p.delete_group(op[2])
        else:
            getattr(p, op[1])(op[2], op[3])
    elif kind == "register":
        s.registers["MyIngress.reg"].write(op[1], op[2])
    elif kind == "counter":
        s.counters["MyIngress.port_counter"].write(op[1], op[2], op[2])
    elif kind == "meter":
        s.meters["MyIngress.port_meter"].set_config(op[1], *op[2])
    elif kind == "mcast":
        if op[1] == "delete_group":
            s.pre.delete_group(op[2])
        else:
            getattr(s.pre, op[1])(op[2], op[3])
    elif kind == "clone":
        getattr(s.pre, op[1])(CloneSession(op[2], ((1, 0),), class_of_service=op[3]))


@settings(max_examples=40, deadline=None)
@given(st.lists(op_strategy(), min_size=10, max_size=40))
def test_rejected_writes_change_nothing(ops):
    from tests.support.rt_p4info import make_p4info
    s = DeviceState.from_p4info(make_p4info())
    accepted = rejected = 0
    for op in ops:
        before = fingerprint(s)
        try:
            apply(s, op)
            accepted += 1
        except RuntimeOpError as err:
            rejected += 1
            assert err.code in {"INVALID_ARGUMENT", "NOT_FOUND", "ALREADY_EXISTS", "RESOURCE_EXHAUSTED",
                                "FAILED_PRECONDITION", "PERMISSION_DENIED", "OUT_OF_RANGE"}
            assert fingerprint(s) == before, op
    assert accepted + rejected == len(ops)
