"""The in-process harness: entries, defaults, registers/counters by name, queues, clock, split pipeline."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from p4exec.harness import Harness
from p4exec.runtime import Lpm, Ternary
from p4exec.v1model.loader import load_config
from tests.p4exec.p4prog import harness, program

DATA = Path(__file__).parent / "data"
BASIC = DATA / "basic_l3.p4"


def ipv4_frame(dst: int, ttl: int = 64) -> bytes:
    from p4exec.runtime.hashes import csum16

    ip = bytearray(20)
    ip[0], ip[8], ip[9] = 0x45, ttl, 17
    ip[2:4] = (20).to_bytes(2, "big")
    ip[12:16] = bytes([10, 0, 0, 1])
    ip[16:20] = dst.to_bytes(4, "big")
    ip[10:12] = csum16(bytes(ip)).to_bytes(2, "big")
    return bytes.fromhex("00aabbccddee001122334455" "0800") + bytes(ip)


def test_from_file_table_add_and_send_routes_with_checksum() -> None:
    h = Harness.from_file(str(BASIC), seed=1)
    h.table_add("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": Lpm(0x0A000100, 24)},
                "MyIngress.ipv4_forward", {"dstAddr": 0x0A0B0C0D0E0F, "port": 2})
    out = h.send(1, ipv4_frame(0x0A000105))
    assert len(out) == 1
    port, pkt = out[0]
    assert port == 2
    assert pkt[:6] == bytes.fromhex("0a0b0c0d0e0f") and pkt[6:12] == bytes.fromhex("00aabbccddee")
    assert pkt[14 + 8] == 63                                     # TTL decremented
    from p4exec.runtime.hashes import csum16
    assert csum16(pkt[14:34]) == 0                               # checksum recomputed
    assert h.send(1, ipv4_frame(0x0B000001)) == []               # default action drop()


def test_bad_checksum_is_flagged_by_verify_checksum() -> None:
    """p4src/basic_l3.p4 drops a packet whose IPv4 checksum verify_checksum() found wrong."""
    h = Harness.from_file(str(DATA.parents[2] / "p4src" / "basic_l3.p4"), seed=1)
    h.table_add("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": Lpm(0x0A000000, 8)},
                "MyIngress.ipv4_forward", {"dstAddr": 1, "port": 3})
    good = ipv4_frame(0x0A000001)
    assert [p for p, _ in h.send(1, good)] == [3]
    bad = bytearray(good)
    bad[14 + 10] ^= 0xFF
    assert h.send(1, bytes(bad)) == []


def test_set_default_short_names_and_ternary_priorities() -> None:
    h = harness(ingress_decls="""
        action set_b(bit<8> v) { hdr.h.b = v; }
        table t { key = { hdr.h.a: ternary; } actions = { set_b; NoAction; } }
    """, ingress="t.apply();")
    h.table_add("t", {"hdr.h.a": Ternary(0x10, 0xF0)}, "set_b", {"v": 1}, priority=1)
    h.table_add("t", {"hdr.h.a": Ternary(0x12, 0xFF)}, "set_b", (2,), priority=10)
    assert h.send(0, b"\x12\0\0\0")[0][1][1] == 2
    assert h.send(0, b"\x13\0\0\0")[0][1][1] == 1
    h.set_default("t", "set_b", {"v": 9})
    assert h.send(0, b"\x99\0\0\0")[0][1][1] == 9
    with pytest.raises(KeyError):
        h.table_add("t", {"nope": 1}, "set_b", {"v": 1}, priority=1)


def test_registers_and_counters_by_name() -> None:
    h = harness(ingress_decls="register<bit<16>>(8) r; counter(8, CounterType.bytes) c;",
                ingress="bit<16> v; r.read(v, 3); hdr.h.a = (bit<8>)v; c.count(3);")
    h.register_write("r", 3, 0x1234)
    assert h.send(0, bytes(4))[0][1][0] == 0x34
    assert h.register_read("MyIngress.r", 3) == 0x1234
    assert h.counter_read("c", 3)[1] == 4


def test_set_queue_depth_shows_in_egress() -> None:
    h = harness(egress="hdr.h.c = (bit<8>)sm.enq_qdepth; hdr.h.d = (bit<8>)sm.deq_qdepth;")
    assert h.send(0, bytes(4)) == [(1, bytes(4))]
    h.set_queue_depth(1, 37)
    assert h.send(0, bytes(4)) == [(1, bytes([0, 0, 37, 37]))]
    h.set_queue_depth(2, 99)
    assert h.send(0, bytes(4)) == [(1, bytes([0, 0, 37, 37]))]
    h.set_queue_depth(1, 0)
    assert h.send(0, bytes(4)) == [(1, bytes(4))]


def test_virtual_clock_feeds_timestamps_and_meters() -> None:
    h = harness(ingress_decls="meter(1, MeterType.packets) m;",
                ingress="bit<2> col; m.execute_meter(0, col); hdr.h.a = (bit<8>)col; "
                        "hdr.h.b = (bit<8>)sm.ingress_global_timestamp;")
    h.state.meters["MyIngress.m"].set_config(0, 1, 1, 2, 2)   # 1 pkt/s committed, 2 pkt/s peak
    colours = [h.send(0, bytes(4))[0][1][0] for _ in range(3)]
    assert colours == [0, 1, 2]
    h.advance(2_000_000)
    out = h.send(0, bytes(4))[0][1]
    assert out[0] == 0 and out[1] == (2_000_000 & 0xFF)


def test_split_pipeline_ingress_then_egress() -> None:
    h = harness(ingress="sm.priority = 3;", egress="hdr.h.d = 1;")
    jobs = h.pipeline.ingress(0, bytes(4), 0)
    assert len(jobs) == 1 and jobs[0].egress_port == 1 and jobs[0].priority == 3 and jobs[0].packet_length == 4
    assert h.pipeline.egress(jobs[0], 5, None) == [(1, b"\0\0\0\x01")]


def test_load_config_from_json_and_source(tmp_path) -> None:
    from p4exec.compiler.program import compile_file

    prog = compile_file(str(BASIC))
    blob = prog.to_json().encode()
    assert json.loads(blob)["format"] == "p4exec-compiled-1"
    dev = load_config(blob)
    p4info = dev.p4info
    assert [t.preamble.name for t in p4info.tables] == ["MyIngress.ipv4_lpm"]
    assert dev.state.tables["MyIngress.ipv4_lpm"] is not None
    assert hasattr(dev.pipeline, "ingress") and hasattr(dev.pipeline, "egress")
    dev2 = load_config(BASIC.read_bytes())
    p4info2 = dev2.p4info
    assert p4info2 == p4info
    assert dev2.state is not dev.state


def test_from_source_errors_are_located() -> None:
    from p4exec.errors import P4Error

    with pytest.raises(P4Error) as ei:
        Harness.from_source(program(ingress="hdr.h.a = 1 +;"), filename="mine.p4")
    assert str(ei.value).startswith("mine.p4:")


def test_digests_logs_and_asserts() -> None:
    h = harness(decls="struct d_t { bit<8> a; }",
                ingress="digest<d_t>(1, { hdr.h.a }); log_msg(\"a={}\", { hdr.h.a }); assert(hdr.h.b == 0);")
    seen = []
    h.set_digest_sink(lambda name, vals: seen.append((name, vals)))
    assert h.send(0, b"\x07\0\0\0") == [(1, b"\x07\0\0\0")]
    assert seen == [("d_t", (7,))] and h.digests[-1] == ("d_t", (7,))
    assert h.state.digests["d_t"].drain() == []             # the sink took it: no duplicate in the state
    assert h.logs[-1] == "a=7"
    assert h.send(0, b"\x07\x01\0\0") == []                 # assert failed: packet dropped, counted
    assert h.stats["assert_failed"] == 1
