"""The one loader: a compiled program instantiated several times gets independent runtime state."""
from __future__ import annotations

from pathlib import Path

import pytest
from scapy.all import IP, UDP, Ether

from p4exec.compiler import compile_file
from p4exec.runtime import ActionCall, Lpm
from p4exec.runtime.tables import normalize_entry
from p4exec.v1model.loader import load, load_config

BASIC = Path(__file__).resolve().parents[2] / "p4src" / "basic_l3.p4"


def ipv4_frame(dst: str) -> bytes:
    return bytes(Ether(dst="00:00:00:00:00:aa", src="00:00:00:00:01:01") / IP(src="10.0.1.1", dst=dst) / UDP())


@pytest.mark.parametrize("pipeline", ["python", "native"])
def test_instances_share_code_not_state(pipeline: str) -> None:
    compiled = compile_file(str(BASIC))
    a = load(compiled, seed=1, pipeline=pipeline)
    b = a.instantiate()
    assert a.compiled is b.compiled and a.p4info is b.p4info
    assert a.state is not b.state and a.pipeline is not b.pipeline
    kind = {"python": "V1Pipeline", "native": "NativePipeline"}[pipeline]
    assert type(a.pipeline).__name__ == type(b.pipeline).__name__ == kind
    table = a.state.tables["MyIngress.ipv4_lpm"]
    entry = normalize_entry(table, [Lpm(0x0A000200, 24)],
                            action=ActionCall("MyIngress.ipv4_forward", (0x000000000202, 2)))
    table.insert(entry)
    assert len(a.state.tables["MyIngress.ipv4_lpm"]) == 1
    assert len(b.state.tables["MyIngress.ipv4_lpm"]) == 0
    [(port, _)] = a.run(1, ipv4_frame("10.0.2.2"))
    assert port == 2
    assert b.run(1, ipv4_frame("10.0.2.2")) == []  # b has no route: dropped
    a.run(1, ipv4_frame("10.0.2.2"))
    counter = "MyIngress.port_counter"
    assert a.state.counters[counter].read(1)[0] == 2  # counts of its own packets only
    assert b.state.counters[counter].read(1)[0] == 1


def test_instances_share_header_classes_not_header_values() -> None:
    """One set of generated classes per program (the interpreter's attribute caches stay valid when packets
    alternate between switches), while each instance's packets still get their own header objects. (Python
    pipeline internals: pinned to it, whatever the default.)"""
    compiled = compile_file(str(BASIC))
    a = load(compiled, seed=1, pipeline="python")
    b = a.instantiate()
    assert a.pipeline.ns["NEW_H"] is b.pipeline.ns["NEW_H"]
    assert a.pipeline.ns is not b.pipeline.ns
    assert a.pipeline.ns["PK"] is not b.pipeline.ns["PK"]
    ha, hb = a.pipeline.ns["NEW_H"](), b.pipeline.ns["NEW_H"]()
    assert ha is not hb
    # the functions that touch state are each instance's own, bound to its own tables
    assert a.pipeline.ns["INGRESS"] is not b.pipeline.ns["INGRESS"]


def test_classes_that_name_an_instance_object_are_built_per_instance() -> None:
    """A program whose prelude/classes would name something each instance binds for itself is not shared:
    each instance runs that part itself, as before (no instance ever sees another's objects)."""
    from p4exec.v1model import namespace

    compiled = compile_file(str(BASIC))
    clone = type(compiled).__new__(type(compiled))
    clone.__dict__.update(compiled.__dict__)
    types = "\n".join(compiled.pysource.split("\n")[:compiled.types_lines])
    clone.types_code = compile(types + "\nclass Sneaky:\n    def f(self):\n        return PK\n", "<test>", "exec")
    assert namespace._shared_types(clone) is None
    a, b = load(clone, seed=1, pipeline="python"), load(clone, seed=1, pipeline="python")
    assert a.pipeline.ns["Sneaky"] is not b.pipeline.ns["Sneaky"]
    assert a.pipeline.ns["Sneaky"]().f() is a.pipeline.pk


def test_load_config_from_source_bytes() -> None:
    loaded = load_config(BASIC.read_bytes(), seed=3)
    assert loaded.seed == 3 and loaded.instantiate(seed=4).seed == 4
    assert [t.preamble.name for t in loaded.p4info.tables] == ["MyIngress.ipv4_lpm"]
