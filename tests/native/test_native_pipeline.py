"""The native pipeline's seams: table writes reach its C index at once (insert, modify, delete, default, reset),
register and counter cells stay the runtime objects' own, the build cache is private, and without a C compiler
the Python pipeline runs with one line saying why."""
from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

import pytest

from p4exec.compiler.program import compile_file, compile_source
from p4exec.harness import Harness
from p4exec.native import build as native_build
from p4exec.native import select
from p4exec.native.pipeline import NativePipeline
from p4exec.runtime import Lpm
from p4exec.runtime.hashes import csum16
from p4exec.v1model.loader import load
from p4exec.v1model.pipeline import V1Pipeline

ROOT = Path(__file__).resolve().parents[2]
BASIC = str(ROOT / "p4src" / "basic_l3.p4")
needs_cc = pytest.mark.skipif(native_build.compiler_available() is None, reason="no C compiler on this machine")


def frame(dst: int, ttl: int = 64) -> bytes:
    ip = bytearray(20)
    ip[0], ip[8], ip[9] = 0x45, ttl, 17
    ip[2:4] = (20 + 10).to_bytes(2, "big")
    ip[12:16] = (0x0A000001).to_bytes(4, "big")
    ip[16:20] = dst.to_bytes(4, "big")
    ip[10:12] = csum16(bytes(ip[:10]) + b"\0\0" + bytes(ip[12:])).to_bytes(2, "big")
    return bytes.fromhex("00aabbccddee001122334455" "0800") + bytes(ip) + b"payload..."


def pair() -> tuple[Harness, Harness]:
    prog = compile_file(BASIC)
    py, nat = Harness(load(prog, pipeline="python")), Harness(load(prog, pipeline="native"))
    assert isinstance(py.pipeline, V1Pipeline) and isinstance(nat.pipeline, NativePipeline)
    return py, nat


def both(hs: tuple[Harness, Harness], fn) -> None:
    for h in hs:
        fn(h)


@needs_cc
def test_table_writes_reach_the_native_index_at_once() -> None:
    hs = pair()
    frames = [frame(0x0A000000 | i) for i in (1, 2, 0x0101, 0x0102)] + [frame(0x0B000001), frame(0x0A000001, ttl=1)]

    def same() -> list:
        outs = [[h.send(1, f) for f in frames] for h in hs]
        assert outs[0] == outs[1]
        return outs[0]
    assert all(o == [] for o in same())          # default drop()
    both(hs, lambda h: h.table_add("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": Lpm(0x0A000000, 8)}, "ipv4_forward",
                                   {"dstAddr": 0x0A0B0C0D0E0F, "port": 3}))
    both(hs, lambda h: h.table_add("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": Lpm(0x0A000100, 24)}, "ipv4_forward",
                                   {"dstAddr": 0x111111111111, "port": 4}))
    out = same()
    assert [o[0][0] if o else None for o in out] == [3, 3, 4, 4, None, None]
    both(hs, lambda h: h.set_default("MyIngress.ipv4_lpm", "ipv4_forward", {"dstAddr": 1, "port": 9}))
    assert same()[4][0][0] == 9
    t = [h._table("MyIngress.ipv4_lpm") for h in hs]
    for tab in t:
        e = tab.entries()[1]
        tab.delete(e)
    out = same()
    assert [o[0][0] if o else None for o in out] == [3, 3, 3, 3, 9, None]
    both(hs, lambda h: h.reset())
    assert all(o == [] for o in same())


@needs_cc
def test_counters_and_registers_stay_the_runtime_objects() -> None:
    py, nat = pair()
    for h in (py, nat):
        h.table_add("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": Lpm(0x0A000000, 8)}, "ipv4_forward",
                    {"dstAddr": 5, "port": 2})
        for port in (1, 1, 7):
            h.send(port, frame(0x0A000001))
    assert nat.counter_read("port_counter", 1) == py.counter_read("port_counter", 1)
    assert nat.counter_read("port_counter", 1)[0] == 2
    c = nat._obj(nat.state.counters, "port_counter")
    c.write(7, 100, 1000)                           # a control-plane write is what the C code counts on
    nat.send(7, frame(0x0A000001))
    assert nat.counter_read("port_counter", 7) == (101, 1000 + len(frame(0x0A000001)))
    nat.reset()
    assert nat.counter_read("port_counter", 7) == (0, 0)
    nat.send(7, frame(0x0A000001))
    assert nat.counter_read("port_counter", 7)[0] == 1   # still counted into the object's cells after reset


@needs_cc
def test_build_cache_is_private(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(native_build, "_loaded", {})
    load(compile_file(BASIC), pipeline="native")
    cache = tmp_path / ".cache" / "p4exec" / "native"
    assert list(cache.glob("_p4n_*.so"))
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o700


def test_without_a_c_compiler_the_python_pipeline_runs(tmp_path, monkeypatch, caplog) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))                  # an empty cache: nothing built to reuse
    monkeypatch.setattr(native_build, "_loaded", {})
    monkeypatch.setattr(native_build, "compiler_available", lambda: None)
    monkeypatch.setattr(select, "_declined", {})
    prog = compile_file(BASIC)
    with caplog.at_level(logging.WARNING, logger="p4exec.native"):
        h = Harness(load(prog, pipeline="native"))
    assert isinstance(h.pipeline, V1Pipeline)
    assert "no C compiler" in (select.native_reason(prog) or "")
    assert sum("native pipeline not used" in r.getMessage() for r in caplog.records) == 1
    h.table_add("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": Lpm(0x0A000000, 8)}, "ipv4_forward",
                {"dstAddr": 5, "port": 2})
    assert h.send(1, frame(0x0A000001))[0][0] == 2


WIDER_THAN_128 = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<256> x; }
struct hdrs_t { h_t h; }
struct meta_t { }
parser P(packet_in pkt, out hdrs_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.h); transition accept; }
}
control NoCheck(inout hdrs_t h, inout meta_t m) { apply { } }
control Ing(inout hdrs_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply { h.h.x = h.h.x + 1; sm.egress_spec = 1; }
}
control Eg(inout hdrs_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control Dep(packet_out pkt, in hdrs_t h) { apply { pkt.emit(h.h); } }
V1Switch(P(), NoCheck(), Ing(), Eg(), NoCheck(), Dep()) main;
"""


def test_unsupported_constructs_decline_with_the_reason(caplog) -> None:
    prog = compile_source(WIDER_THAN_128, "wide256.p4")
    h = Harness(load(prog, pipeline="native"))
    assert isinstance(h.pipeline, V1Pipeline)
    assert "wider than 128 bits" in (select.native_reason(prog) or "")


IN_COPY = """
#include <core.p4>
#include <v1model.p4>
header pair_t { bit<8> a; bit<8> b; }
struct hdrs_t { pair_t p; }
struct meta_t { }
parser P(packet_in pkt, out hdrs_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.p); transition accept; }
}
control NoCheck(inout hdrs_t h, inout meta_t m) { apply { } }
control Ing(inout hdrs_t h, inout meta_t m, inout standard_metadata_t sm) {
    action swap_from(in pair_t before) {
        h.p.a = 7;
        h.p.b = before.a;      /* the value at the call, not the 7 just written */
    }
    apply { swap_from(h.p); sm.egress_spec = 1; }
}
control Eg(inout hdrs_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control Dep(packet_out pkt, in hdrs_t h) { apply { pkt.emit(h.p); } }
V1Switch(P(), NoCheck(), Ing(), Eg(), NoCheck(), Dep()) main;
"""


@needs_cc
def test_an_in_object_argument_is_a_copy() -> None:
    """`in` header arguments are copied at the call (P4 copy-in): writes to the original inside the action do not
    show through the parameter (a p4c STF sample, gauntlet_indirect_hdr_assign_2, found the C aliasing it)."""

    prog = compile_source(IN_COPY, "in_copy.p4")
    py, nat = Harness(load(prog, pipeline="python")), Harness(load(prog, pipeline="native"))
    assert isinstance(nat.pipeline, NativePipeline)
    assert py.send(0, b"\x05\x06") == nat.send(0, b"\x05\x06") == [(1, b"\x07\x05")]
