"""STF parsing of representative files (written here, in the shapes p4c's test STF files use)."""
from __future__ import annotations

import pytest

from p4exec.errors import P4Error
from p4exec.runtime.match import Exact, Lpm, MatchKind, Optional_, Range, Ternary
from p4exec.stf.parse import (
    AddEntry,
    CheckCounter,
    CounterWrite,
    Expect,
    KeyValue,
    McMgrpCreate,
    McNodeAssociate,
    McNodeCreate,
    MeterSetRates,
    MirroringAdd,
    MirroringAddMc,
    NoPacket,
    Packet,
    RegisterRead,
    RegisterReset,
    RegisterWrite,
    RemoveAll,
    SetDefault,
    StfError,
    Wait,
    parse_stf,
    parse_stf_file,
)

SAMPLE = """\
# an L3 test
setdefault ipv4_lpm drop()
add ipv4_lpm hdr.ipv4.dstAddr:0x0a000100/24 MyIngress.ipv4_forward(dstAddr:0x000000000102, port:2)
add acl 10 hdr.ethernet.etherType:0x0800&&&0xFF00 meta.port:0x**1 set_port(port:3)
ADD test1 0 data.$valid:0b1 data.f1:0x****0101 setb1(val:0x7f, port:2) = A
add t hdr.h[1].f:17 act()

packet 0 00000000 0102 00000000 0001 0800   45000014
expect 2 00000000 0102 ****0000 0001 0800 45 $
expect 3
no_packet
mirroring_add 5 4
mirroring_add_mc 6 1
mc_mgrp_create 1
mc_node_create 0 1 2 3
mc_node_associate 1 0
register_write MyIngress.reg 3 0x55
register_read MyIngress.reg 3
register_reset MyIngress.reg
counter_write c 1 10 1000
check_counter cnt(1) packets == 2
check_counter cnt($A) bytes >= 64
meter_set_rates MyIngress.m 0 0.0001:1 0.0005:3
meter_array_set_rates MyIngress.m 1:2 3:4
remove all
wait
"""


def test_representative_file(tmp_path):
    f = tmp_path / "t.stf"
    f.write_text(SAMPLE)
    stmts = parse_stf_file(f)
    kinds = [type(s) for s in stmts]
    assert kinds == [SetDefault, AddEntry, AddEntry, AddEntry, AddEntry, Packet, Expect, Expect, NoPacket,
                     MirroringAdd, MirroringAddMc, McMgrpCreate, McNodeCreate, McNodeAssociate,
                     RegisterWrite, RegisterRead, RegisterReset, CounterWrite, CheckCounter, CheckCounter,
                     MeterSetRates, MeterSetRates, RemoveAll, Wait]
    sd = stmts[0]
    assert sd.table == "ipv4_lpm" and sd.action.name == "drop" and sd.action.args == ()
    add = stmts[1]
    assert add.priority is None and add.keys[0][0] == "hdr.ipv4.dstAddr"
    assert add.keys[0][1].to_match(MatchKind.LPM, 32) == Lpm(0x0A000100, 24)
    assert add.action.arg_dict() == {"dstAddr": 0x102, "port": 2}
    acl = stmts[2]
    assert acl.priority == 10
    assert acl.keys[0][1].to_match(MatchKind.TERNARY, 16) == Ternary(0x0800, 0xFF00)
    assert acl.keys[1][1].to_match(MatchKind.TERNARY, 9) == Ternary(0x001, 0x00F)
    t1 = stmts[3]
    assert t1.priority == 0 and t1.handle == "A" and t1.keys[0][0] == "data.$valid"
    assert t1.keys[1][1].to_match(MatchKind.TERNARY, 32) == Ternary(0x0101, 0xFFFF)
    assert stmts[4].keys[0][0] == "hdr.h[1].f"
    assert stmts[5].port == 0 and stmts[5].data == bytes.fromhex("00000000010200000000000108004500 0014")
    exp = stmts[6]
    assert exp.port == 2 and exp.exact and exp.pattern == "000000000102****00000001080045"
    assert stmts[7].pattern is None and stmts[7].matches(b"anything")
    assert stmts[9].session == 5 and stmts[9].port == 4
    assert stmts[12].rid == 0 and stmts[12].ports == (1, 2, 3)
    assert stmts[14].value == 0x55
    assert (stmts[17].packets, stmts[17].bytes) == (10, 1000)
    assert stmts[18] .index == 1 and stmts[18].count_type == "packets" and stmts[18].value == 2
    assert stmts[19].index == "$A" and stmts[19].op == ">="
    assert stmts[20].rates == ((0.0001, 1), (0.0005, 3)) and stmts[20].index == 0
    assert stmts[21].index is None and stmts[21].rates == ((1.0, 2), (3.0, 4))
    assert stmts[1].loc.file.endswith("t.stf") and stmts[1].loc.line == 3


def test_expect_matching():
    e = parse_stf("expect 1 0A**0c\n")[0]
    assert e.matches(bytes.fromhex("0a770c")) and e.matches(bytes.fromhex("0a770cff"))
    assert not e.matches(bytes.fromhex("0b770c")) and not e.matches(bytes.fromhex("0a77"))
    exact = parse_stf("expect 1 0a**0c $\n")[0]
    assert exact.matches(bytes.fromhex("0a770c")) and not exact.matches(bytes.fromhex("0a770cff"))


def test_key_value_semantics_follow_p4c_driver():
    def kv(text: str) -> KeyValue:
        return parse_stf(f"add t k:{text} a()\n")[0].keys[0][1]

    assert kv("0x0a0000**").to_match(MatchKind.LPM, 32) == Lpm(0x0A000000, 24)
    assert kv("0x0a000001").to_match(MatchKind.LPM, 32) == Lpm(0x0A000001, 32)
    assert kv("0x0/0").to_match(MatchKind.LPM, 32) is None
    assert kv("0x0&&&0x0").to_match(MatchKind.TERNARY, 8) is None
    assert kv("0x****").to_match(MatchKind.TERNARY, 16) is None
    assert kv("5").to_match(MatchKind.TERNARY, 8) == Ternary(5, 0xFF)
    assert kv("0b1*1").to_match(MatchKind.TERNARY, 3) == Ternary(0b101, 0b101)
    assert kv("17").to_match(MatchKind.EXACT, 8) == Exact(17)
    assert kv("17").to_match(MatchKind.OPTIONAL, 8) == Optional_(17)
    assert kv("17").to_match(MatchKind.RANGE, 8) == Range(17, 17)


@pytest.mark.parametrize(("text", "line", "col"), [
    ("frobnicate 1 2\n", 1, 1),
    ("\n\nadd t k:0x01\n", 3, 13),             # no action call
    ("packet 1 0a0\n", 1, 1),                  # odd number of nibbles
    ("packet 1 0a0g\n", 1, 13),                # bad character
    ("expect x 00\n", 1, 7),                   # no port
    ("expect 1 00 $ 11\n", 1, 15),             # data after $
    ("add t k:1 a(p:)\n", 1, 15),              # missing value
    ("mirroring_add 1\n", 1, 16),              # missing port
    ("register_write r 1 0x**\n", 1, 20),      # don't-care digits in a plain number
    ("check_counter c(1) packets ~ 2\n", 1, 28),  # bad character
    ("setdefault t a(p:1) extra\n", 1, 21),
])
def test_errors_are_located(text, line, col):
    with pytest.raises(StfError) as ei:
        parse_stf(text, "bad.stf")
    err = ei.value
    assert isinstance(err, P4Error)
    assert (err.loc.file, err.loc.line, err.loc.col) == ("bad.stf", line, col)
    assert str(err).startswith(f"bad.stf:{line}:{col}: error: ")


def test_comments_blank_lines_and_case():
    stmts = parse_stf("  # only a comment\n\nWAIT   # trailing\nexpect 4 00 # c\n")
    assert isinstance(stmts[0], Wait) and isinstance(stmts[1], Expect) and stmts[1].pattern == "00"


def test_add_lines_become_runtime_entries(state):
    from p4exec.runtime import ActionCall
    from p4exec.stf.parse import action_call, table_entry
    stmts = parse_stf(
        "add ipv4_lpm hdr.ipv4.dstAddr:0x0a000100/24 ipv4_forward(port:2, dstAddr:0x0a)\n"
        "add acl 7 etherType:0x0800&&&0xff00 port:1 MyIngress.drop()\n"
        "add acl etherType:0x0800&&&0xff00 MyIngress.drop()\n"
        "add ipv4_lpm nosuch:1 drop()\n"
        "add mac dstAddr:5 nosuch()\n"
        "add mac dstAddr:5 ipv4_forward(port:1)\n"
        "setdefault ipv4_lpm ipv4_forward(dstAddr:1, port:3)\n", "t.stf")
    lpm = state.tables["MyIngress.ipv4_lpm"]
    e = table_entry(lpm, stmts[0])
    assert e.match == (Lpm(0x0A000100, 24),) and e.priority == 0
    assert e.action == ActionCall("MyIngress.ipv4_forward", (0x0A, 2))
    lpm.insert(e)
    acl = state.tables["MyIngress.acl"]
    e2 = table_entry(acl, stmts[1])
    assert e2.priority == 8 and e2.match == (Ternary(0x0800, 0xFF00), Range(1, 1), None)
    e4 = table_entry(acl, parse_stf("add acl 1 port:0x10&&&0x1f0 MyIngress.drop()\n")[0])
    assert e4.match == (None, Range(0x10, 0x1F), None)
    with pytest.raises(StfError, match="not a contiguous range"):
        table_entry(acl, parse_stf("add acl 1 port:0x**1 MyIngress.drop()\n")[0])
    with pytest.raises(StfError, match="needs a priority"):
        table_entry(acl, stmts[2])
    with pytest.raises(StfError, match="no key field"):
        table_entry(lpm, stmts[3])
    mac = state.tables["MyIngress.mac"]
    with pytest.raises(StfError, match="no action"):
        table_entry(mac, stmts[4])
    with pytest.raises(StfError, match="missing parameter"):
        table_entry(mac, stmts[5])
    # a key not given is 0 for an exact field (p4c's driver), the vrf here
    e3 = table_entry(mac, parse_stf("add mac dstAddr:5 drop()\n")[0])
    assert e3.match == (Exact(5), Exact(0))
    assert action_call(lpm, stmts[6].action, stmts[6].loc) == ActionCall("MyIngress.ipv4_forward", (1, 3))
    # ambiguous suffixes are errors
    from p4exec.stf.parse import resolve_name
    with pytest.raises(StfError, match="ambiguous"):
        resolve_name(["a.x.f", "b.x.f"], "f", "field", stmts[0].loc)
    assert resolve_name(["hdr.h[1].f"], "hdr.h$1.f", "field", stmts[0].loc) == "hdr.h[1].f"


def test_stf_priorities_larger_wins_and_zero_is_allowed():
    """Shaped like p4c's ternary2 test: overlapping ternary entries, priority 0 and a larger winner."""
    from p4exec.runtime import ActionCall, ActionInfo, KeyField, MatchKind, ParamInfo, Table
    from p4exec.stf.parse import table_entry
    act = {"ingress.act": ActionInfo("ingress.act", 1, (ParamInfo("val", 1, 8),))}
    t = Table("ingress.ex1", 1, [KeyField("hdr.extra[0].h", 1, 16, MatchKind.TERNARY)], act)
    for st_ in parse_stf("add ex1 0 extra$0.h:0x****  act(val:1)\n"
                         "add ex1 100 extra$0.h:0x25** act(val:2)\n"
                         "add ex1 110 extra$0.h:0x2525 act(val:3)\n"):
        t.insert(table_entry(t, st_))
    assert t.lookup((0x2525,)).action == ActionCall("ingress.act", (3,))
    assert t.lookup((0x2500,)).action == ActionCall("ingress.act", (2,))
    assert t.lookup((0x1234,)).action == ActionCall("ingress.act", (1,))
