"""Every STF test of the project on both targets: p4exec (in process) and BMv2 (the reference).

With p4c-bm2-ss and simple_switch_grpc on PATH each STF file must give the same packets
on both targets and meet its expectations on both, or differ exactly as difftest/expected.py documents.
Without them the BMv2 cases skip with the reason; the toolchain-free checks below always run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from difftest.__main__ import stf_files
from difftest.expected import EXPECTED
from difftest.runtime_calls import PRIORITY_PIVOT, Bmv2Names, port_map, table_add
from difftest.stf_both import program_for, run_both
from difftest.toolchain import skip_reason
from p4exec.harness import Harness
from p4exec.stf import parse as S

ROOT = Path(__file__).resolve().parents[2]
FILES = stf_files()
needs_bmv2 = pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")


@pytest.mark.bmv2
@needs_bmv2
@pytest.mark.timeout(600)
@pytest.mark.parametrize("stf", FILES, ids=[f.stem for f in FILES])
def test_stf_on_both_targets(stf: Path) -> None:
    verdict = run_both(stf)
    expected = EXPECTED.get(stf.stem)
    if expected is None:
        assert verdict.agree and not verdict.bmv2_failures and not verdict.embedded_failures, verdict.report()
    else:
        assert expected.problems(verdict) == [], f"{expected.reason}\n{verdict.report()}"


def test_every_stf_file_is_covered() -> None:
    """tests/p4 and tests/dataplane both contribute, and every documented difference names a real file."""
    names = {f.stem for f in FILES}
    assert {f.parent.name for f in FILES} == {"p4", "dataplane"}
    assert set(EXPECTED) <= names
    assert len(FILES) == len(list((ROOT / "tests" / "p4").glob("*.stf"))) + len(
        list((ROOT / "tests" / "dataplane").glob("*.stf")))


def test_programs_of_stf_files() -> None:
    assert program_for(ROOT / "tests" / "p4" / "12_table_exact.stf") == ROOT / "tests" / "p4" / "12_table_exact.p4"
    assert program_for(ROOT / "tests" / "dataplane" / "basic_l3.stf") == ROOT / "p4src" / "basic_l3.p4"
    assert program_for(ROOT / "tests" / "dataplane" / "ethplus_trim.stf") == ROOT / "p4src" / "ethplus.p4"
    for f in FILES:
        assert program_for(f).exists()


_TERNARY_JSON = {
    "pipelines": [{"tables": [{"name": "MyIngress.t", "match_type": "ternary", "actions": ["MyIngress.set"],
                               "key": [{"match_type": "ternary", "name": "hdr.h.a"},
                                       {"match_type": "lpm", "name": "hdr.h.b"}]}]}],
    "actions": [{"name": "MyIngress.set", "runtime_data": [{"name": "port", "bitwidth": 9}]}],
}
_TERNARY_P4 = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<16> b; }
struct headers_t { h_t h; }
struct meta_t { }
parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; } }
control V(inout headers_t hdr, inout meta_t m) { apply { } }
control MyIngress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    action set(bit<9> port) { sm.egress_spec = port; }
    table t { key = { hdr.h.a : ternary; hdr.h.b : lpm; } actions = { set; } }
    apply { t.apply(); } }
control E(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), V(), MyIngress(), E(), C(), D()) main;
"""


def test_add_lines_become_runtime_calls() -> None:
    """STF priorities (larger wins) turn around for BMv2 (smaller wins); keys not given are don't care;
    values are the canonical matches p4exec's STF layer builds, so both targets get the same entry; keys
    and action data go as bytes of the field's width."""
    harness = Harness.from_source(_TERNARY_P4)
    names = Bmv2Names(_TERNARY_JSON)
    table = harness.state.tables["MyIngress.t"]
    lines = S.parse_stf("add t 5 hdr.h.a:0x1* set(port:3)\nadd t 9 hdr.h.b:0x0a00/8 set(port:0x201)\n")
    got = [table_add(names, table, st) for st in lines]  # type: ignore[arg-type]
    assert [t for t, _ in got] == ["MyIngress.t", "MyIngress.t"]
    first, second = (c for _, c in got)
    assert first.text == f"table_add MyIngress.t MyIngress.set 0x10&&&0xf0 0x0/0 => 0x3 {PRIORITY_PIVOT - 6}"
    assert second.text == f"table_add MyIngress.t MyIngress.set 0x0&&&0x0 0xa00/8 => 0x1 {PRIORITY_PIVOT - 10}"
    assert (first.service, first.method) == ("standard", "bm_mt_add_entry")
    args = {a.field_id: a.value for a in first.args}
    assert args[1] == 0 and args[2] == "MyIngress.t" and args[4] == "MyIngress.set"
    ternary, lpm = args[3].items
    assert [(a.field_id, a.value) for a in ternary] == [(1, 2), (4, ternary[1].value)]
    assert [(a.field_id, a.value) for a in ternary[1].value] == [(1, b"\x10"), (2, b"\xf0")]
    assert [(a.field_id, a.value) for a in lpm[1].value] == [(1, b"\x00\x00"), (2, 0)]
    assert args[5].items == (b"\x00\x03",)  # bit<9>: two bytes
    (priority,) = args[6]
    second_priority = {a.field_id: a.value for a in second.args}[6][0].value
    assert priority.value == PRIORITY_PIVOT - 6 > second_priority  # priority 9 beats 5 on BMv2 too


def test_port_sets_are_bmv2_port_maps() -> None:
    assert port_map([1, 2]) == "110"
    assert port_map([3]) == "1000"
    assert port_map([]) == ""


def test_skip_reason_names_what_is_missing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    reason = skip_reason()
    assert reason is not None
    for tool in ("p4c-bm2-ss", "simple_switch_grpc"):
        assert tool in reason
