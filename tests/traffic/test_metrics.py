"""Metric formulas checked against values computed by hand."""

from __future__ import annotations

import csv
import json

import pytest

from traffic.engine import CollectiveRecord, FlowRecord, HostConfig, RunResult
from traffic.metrics import (
    algbw_GBps,
    bus_factor,
    busbw_GBps,
    percentile,
    summarize,
    write_all,
)


def test_bus_factors_match_nccl_tests() -> None:
    assert bus_factor("all_reduce", 8) == pytest.approx(14 / 8)
    assert bus_factor("all_gather", 8) == pytest.approx(7 / 8)
    assert bus_factor("reduce_scatter", 4) == pytest.approx(3 / 4)
    assert bus_factor("all_to_all", 2) == pytest.approx(1 / 2)
    assert bus_factor("broadcast", 16) == 1.0


def test_bandwidths_by_hand() -> None:
    # 1 GB all-reduce on 4 ranks in 2 s: algbw 0.5 GB/s, busbw 0.5 * 2 * 3 / 4 = 0.75 GB/s
    alg = algbw_GBps(1_000_000_000, 2.0)
    assert alg == pytest.approx(0.5)
    assert busbw_GBps("all_reduce", 4, alg) == pytest.approx(0.75)
    # 8 MB all-gather on 8 ranks in 1 ms: 8 GB/s, busbw 7 GB/s
    assert busbw_GBps("all_gather", 8, algbw_GBps(8_000_000, 1e-3)) == pytest.approx(7.0)


def test_percentile_nearest_rank() -> None:
    assert percentile(list(range(1, 101)), 99) == 99
    assert percentile([5.0, 1.0, 3.0], 50) == 3.0
    assert percentile([5.0, 1.0, 3.0], 99) == 5.0
    assert percentile([7.0], 1) == 7.0
    assert percentile([], 50) is None


def _flow(fid: int, coll: tuple[str, int], start: int, settle: int, **kw) -> FlowRecord:
    f = FlowRecord(fid, coll, fid, 0, 1, 0, kw.pop("bytes", 1000), kw.pop("npkts", 10))
    f.start_ns, f.settle_ns = start, settle
    for k, v in kw.items():
        setattr(f, k, v)
    return f


def _result() -> RunResult:
    # iteration 0: all-reduce of 4 MB on 4 ranks from t=1 ms to t=5 ms; iteration 1: from 10 ms to 18 ms
    c0 = CollectiveRecord("ar", 0, "all_reduce", "ring", 4_000_000, (0, 1, 2, 3), 1_000_000, 5_000_000, [0, 1])
    c1 = CollectiveRecord("ar", 1, "all_reduce", "ring", 4_000_000, (0, 1, 2, 3), 10_000_000, 18_000_000, [2, 3])
    flows = [
        _flow(0, ("ar", 0), 1_000_000, 2_000_000, sent=10, delivered=10, complete=True, ce=2),
        _flow(1, ("ar", 0), 1_000_000, 4_000_000, sent=10, delivered=10, complete=True, reordered=1, reorder_max=3),
        _flow(2, ("ar", 1), 10_000_000, 12_000_000, sent=10, delivered=8, complete=False, duplicates=1),
        _flow(3, ("ar", 1), 10_000_000, 14_000_000, sent=10, delivered=10, complete=True, ce=10),
    ]
    return RunResult(flows, [c0, c1], 0.02, 40, False, False, 0, 0, HostConfig(flow_rate_bps=200e6))


def test_summarize_by_hand(tmp_path) -> None:
    m = summarize(_result())
    r0, r1 = m.records
    assert r0["time_s"] == pytest.approx(0.004)
    assert r0["algbw_GBps"] == pytest.approx(1.0)  # 4e6 B / 4e-3 s
    assert r0["busbw_GBps"] == pytest.approx(1.5)  # x 2*3/4
    assert r0["ecn_fraction"] == pytest.approx(2 / 20)
    assert r0["fct_p50_s"] == pytest.approx(0.001) and r0["fct_p99_s"] == pytest.approx(0.003)
    assert r0["reorder_max"] == 3 and r0["complete"] is True
    assert r1["packets_lost"] == 2 and r1["loss_fraction"] == pytest.approx(2 / 20)
    assert r1["duplicates"] == 1 and r1["complete"] is False
    assert r1["fct_max_s"] == pytest.approx(0.004)  # only the complete flow has an FCT
    assert [s["step_time_s"] for s in m.steps] == [pytest.approx(0.004), pytest.approx(0.008)]
    assert m.summary["step_time_p99_s"] == pytest.approx(0.008)
    assert m.summary["step_time_p50_s"] == pytest.approx(0.004)
    assert m.summary["ecn_fraction"] == pytest.approx(12 / 38)

    write_all(tmp_path, _result())
    doc = json.loads((tmp_path / "metrics.json").read_text())
    assert len(doc["records"]) == 2 and doc["records"][0]["busbw_GBps"] == pytest.approx(1.5)
    rows = list(csv.DictReader(open(tmp_path / "metrics.csv")))
    assert [r["iteration"] for r in rows] == ["0", "1"]
    assert float(rows[1]["loss_fraction"]) == pytest.approx(0.1)
    flows = list(csv.DictReader(open(tmp_path / "flows.csv")))
    assert len(flows) == 4 and flows[2]["fct_s"] == ""
