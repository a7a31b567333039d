"""Trace format: parsing, validation, expansion into planned collectives; the SimAI/AICB importer."""

from __future__ import annotations

from pathlib import Path

import pytest

from traffic.checker import check
from traffic.simai import load_simai, parse_simai
from traffic.trace import TraceError, from_dict, load, parse_size

EXAMPLES = Path(__file__).resolve().parents[2] / "traffic" / "examples"


def test_parse_size() -> None:
    assert parse_size(4096) == 4096
    assert parse_size("4KiB") == 4096
    assert parse_size("1.5M") == 1_500_000
    assert parse_size("2 GB") == 2_000_000_000
    assert parse_size("64kib") == 65536
    with pytest.raises(TraceError):
        parse_size("lots")


def test_example_trace_expands_with_dependencies() -> None:
    tr = load(EXAMPLES / "tp-dp-step.yaml")
    assert tr.world == 4 and tr.iterations == 3
    plan = tr.plan(endpoints=[10, 11, 12, 13])
    names = [(p.name, p.iteration) for p in plan]
    assert len(plan) == 3 * 7  # 2 + 2 + 2 + 1 instances per iteration
    by = {(p.name, p.iteration): p for p in plan}
    assert by[("bwd_tp[1]", 0)].after == (("fwd_tp[1]", 0),)  # waits only for groups sharing a rank
    assert by[("bwd_tp[1]", 0)].delay_s == pytest.approx(0.0005)
    assert set(by[("grads[0]", 0)].after) == {("bwd_tp[0]", 0), ("bwd_tp[1]", 0)}  # ranks 0 and 2
    assert set(by[("fwd_tp[0]", 1)].after) == {n for n in names if n[1] == 0}  # step barrier
    assert by[("fwd_tp[0]", 1)].delay_s == pytest.approx(0.001)
    assert by[("grads[1]", 2)].schedule.ranks == (11, 13)
    assert by[("grads[0]", 0)].schedule.params["slices"] == 2
    moe = by[("moe", 0)].schedule
    assert moe.kind == "all_to_all" and moe.params["phase"] == "both"
    for p in plan:
        check(p.schedule)


def test_dump_and_reload_round_trip(tmp_path) -> None:
    tr = load(EXAMPLES / "tp-dp-step.yaml")
    for suffix in ("yaml", "json"):
        out = tmp_path / f"t.{suffix}"
        tr.dump(out)
        again = load(out)
        assert again == tr


@pytest.mark.parametrize(("doc", "msg"), [
    ({"collectives": [{"op": "all_reduce", "size": 10, "group": [0]}]}, "world"),
    ({"world": 4, "collectives": [{"op": "all_reduce", "size": 10, "group": [0, 9]}]}, "0..3"),
    ({"world": 4, "collectives": [{"op": "frobnicate", "size": 10}]}, "unknown pattern"),
    ({"world": 4, "collectives": [{"op": "all_reduce", "size": 10, "after": ["x"]}]}, "not an earlier"),
    ({"world": 4, "collectives": [{"name": "a", "op": "all_reduce", "size": 10},
                                  {"name": "a", "op": "all_reduce", "size": 10}]}, "duplicate"),
    ({"world": 4, "collectives": [{"op": "all_reduce", "size": 10, "params": {"bogus": 1}}]}, "bogus"),
    ({"world": 4, "collectives": [{"op": "all_reduce"}]}, "size"),
])
def test_invalid_traces_name_the_problem(doc: dict, msg: str) -> None:
    with pytest.raises(TraceError, match=msg):
        from_dict(doc)


def test_simai_import() -> None:
    tr = load_simai(EXAMPLES / "simai-mini.txt", size_scale=0.5, compute_scale=1.0)
    assert tr.world == 8
    ops = [(c.name.split(".", 1)[1], c.op, len(c.groups), len(c.groups[0]), c.size) for c in tr.collectives]
    assert ops == [
        ("embedding.fwd", "all_reduce", 4, 2, 32768),  # TP groups of 2, 4 of them
        ("attn.fwd", "all_gather", 4, 2, 65536),
        ("moe.fwd", "all_to_all", 4, 2, 32768),  # EP groups: tp 2 x (dp 4 / ep 2)
        ("head.wg", "all_gather", 2, 4, 32768),  # DP groups
        ("moe.ig", "all_to_all", 4, 2, 32768),
        ("moe.wg", "reduce_scatter", 4, 2, 65536),  # DP groups among expert replicas
        ("attn.ig", "reduce_scatter", 4, 2, 65536),
        ("attn.wg", "all_reduce", 2, 4, 131072),
    ]
    c = {x.name.split(".", 1)[1]: x for x in tr.collectives}
    assert c["attn.fwd"].gap_s == pytest.approx(2000e-9)
    assert c["attn.wg"].after == [c["attn.ig"].name]  # overlapped: hangs off the chain
    assert c["attn.ig"].after == [c["moe.ig"].name]  # input gradients form the chain
    # head has no forward or input-gradient communication: its compute in both passes carries over
    assert c["moe.ig"].gap_s == pytest.approx(3000e-9 + 3000e-9 + 1e-9)
    assert c["moe.wg"].groups[0] == [0, 4]  # rank = d * tp + t with d in {0, 2}
    plan = tr.plan()
    for p in plan:
        check(p.schedule)


def test_simai_rejects_malformed() -> None:
    with pytest.raises(TraceError, match="12"):
        parse_simai("HYBRID model_parallel_NPU_group: 2 all_gpus: 4\n1\nx -1 1 ALLREDUCE 10\n")
    with pytest.raises(TraceError, match="multiple"):
        parse_simai("HYBRID model_parallel_NPU_group: 3 all_gpus: 4\n0\n")
    with pytest.raises(TraceError, match="unknown communication"):
        parse_simai("HYBRID model_parallel_NPU_group: 2 all_gpus: 4\n1\n"
                    "x -1 1 BROADCASTX 10 1 NONE 0 1 NONE 0 1\n")


def test_cli_schedule_prints_proof(capsys) -> None:
    from traffic.cli import main

    assert main(["schedule", "all_reduce", "--n", "4", "--size", "4000", "--algorithm", "rhd", "--show", "2"]) == 0
    out = capsys.readouterr().out
    assert "correct, race-free" in out and "24000 bytes on the wire (textbook 24000)" in out
    assert main(["schedule", "all_reduce", "--n", "4", "--param", "bogus=1"]) == 1
