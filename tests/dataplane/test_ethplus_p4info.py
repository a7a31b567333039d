"""The control-plane surface of ethplus.p4 is what docs/ethplus-header.md promises.

Why: the controller, the traffic engine and users address tables, registers and
counters by the names p4c writes into P4Info; a rename in p4src must show up
here before it silently breaks them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from p4exec.harness import Harness

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "ethplus-header.md").read_text()


@pytest.fixture(scope="module")
def p4info():
    return Harness.from_file(str(ROOT / "p4src" / "ethplus.p4")).p4info


def names(p4info, kind: str) -> set[str]:
    return {x.preamble.name for x in getattr(p4info, kind)}


def test_documented_objects_exist(p4info) -> None:
    assert names(p4info, "tables") == {
        "MyIngress.fwd.eid_table", "MyIngress.fwd.ipv4_lpm", "MyIngress.lb.lb_config",
        "MyIngress.lb.lb_tuning", "MyIngress.lb.nhop_group", "MyIngress.lb.ecmp_group", "MyEgress.neighbor_mac",
        "MyEgress.ecn.ecn_config", "MyIngress.trim.trim_config"}
    assert names(p4info, "action_profiles") == {"MyIngress.lb.ecmp_selector"}
    assert {"port_down", "port_qdepth", "MyEgress.telemetry.qdepth_max",
            "MyIngress.lb.best_port", "MyIngress.lb.spray_next", "port_pending", "port_deq",
            "MyIngress.lb.flowlet_ticket", "MyIngress.lb.lb_trace", "MyIngress.lb.lb_trace_next"} <= names(p4info, "registers")
    assert names(p4info, "counters") == {
        "MyIngress.rx_port_counter", "MyIngress.drop_reason_counter", "MyIngress.drop_port_counter",
        "MyEgress.telemetry.tx_port_counter", "MyEgress.ecn.ecn_marked", "MyIngress.trim.trimmed_counter"}


def test_every_p4info_object_is_documented(p4info) -> None:
    for kind in ("tables", "action_profiles", "registers", "counters", "actions"):
        for name in names(p4info, kind):
            if name != "NoAction":
                assert f"`{name.rsplit('.', 1)[-1]}" in DOC or name in DOC, (kind, name)


def test_action_parameters_as_documented(p4info) -> None:
    params = {a.preamble.name: [(p.name, p.bitwidth) for p in a.params] for a in p4info.actions}
    assert params["MyIngress.lb.set_lb_config"] == [
        ("mode", 2), ("flowlet_gap_us", 48), ("best_hop_timeout_us", 48), ("probe_mgrp", 16)]
    assert params["MyIngress.lb.set_lb_tuning"] == [("flags", 8), ("near_slack", 16), ("drain_margin", 16)]
    assert params["MyIngress.lb.set_candidates"] == [("n_ports", 4)] + [(f"port{i}", 9) for i in range(8)]
    assert params["MyIngress.fwd.eid_to_group"] == [("group_id", 16), ("dst_index", 16)]
    assert params["MyEgress.ecn.set_ecn_thresholds"] == [("kmin", 19), ("kmax", 19), ("pmax", 16)]
    assert params["MyIngress.trim.set_trim"] == [("enable", 1), ("threshold", 19), ("keep_bytes", 32)]


def test_controller_headers(p4info) -> None:
    meta = {c.preamble.name: [(m.name, m.bitwidth) for m in c.metadata]
            for c in p4info.controller_packet_metadata}
    assert meta == {"packet_out": [("egress_port", 9), ("_pad", 7)],
                    "packet_in": [("ingress_port", 9), ("reason", 8), ("_pad", 7)]}


def test_basic_l3_names_others_rely_on() -> None:
    info = Harness.from_file(str(ROOT / "p4src" / "basic_l3.p4")).p4info
    assert names(info, "tables") == {"MyIngress.ipv4_lpm"}
    assert {"MyIngress.ipv4_forward", "MyIngress.drop", "NoAction"} == names(info, "actions")
    assert names(info, "counters") == {"MyIngress.port_counter"}
    fwd = next(a for a in info.actions if a.preamble.name == "MyIngress.ipv4_forward")
    assert [(p.name, p.bitwidth) for p in fwd.params] == [("dstAddr", 48), ("port", 9)]


def test_inc_program_is_ethplus_plus_aggregation(p4info) -> None:
    """ethplus_inc.p4 keeps every object of ethplus.p4 under the same id and adds only the documented ones."""
    inc = Harness.from_file(str(ROOT / "p4src" / "ethplus_inc.p4")).p4info
    for kind in ("tables", "action_profiles", "registers", "counters", "actions"):
        base = {x.preamble.name: x.preamble.id for x in getattr(p4info, kind)}
        more = {x.preamble.name: x.preamble.id for x in getattr(inc, kind)}
        assert base.items() <= more.items(), kind
        for name in set(more) - set(base):
            assert name.startswith("MyIngress.agg.inc_"), (kind, name)
            assert f"`{name.rsplit('.', 1)[-1]}" in DOC or name in DOC, (kind, name)
    assert names(inc, "tables") - names(p4info, "tables") == {"MyIngress.agg.inc_job", "MyIngress.agg.inc_member"}
