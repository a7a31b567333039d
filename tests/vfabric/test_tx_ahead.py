"""The NIC's transmit-ahead window (traffic/host.py `TX_AHEAD_NS`) is an event-count saving, not a model
change where nothing could have changed a frame: with one flow per NIC port (a ring all-reduce on ERack+)
every frame starts at the same fractional ns and carries the same send time as with one event per frame,
so every flow record is identical — with fewer events."""

from __future__ import annotations

from dataclasses import asdict

import pytest

from tests.support.vfabric import replay
from topologies.builtins import erack
from traffic import host as hosts
from traffic.replay import pattern_plan

AHEAD_NS = hosts.TX_AHEAD_NS


def _ring(monkeypatch: pytest.MonkeyPatch, ahead_ns: int):
    monkeypatch.setattr(hosts, "TX_AHEAD_NS", ahead_ns)
    topo = erack(gpus=4, planes=2, radix=4, rate_gbps=400, delay_us=0.5)
    eids = sorted(ep.eid for ep in topo.endpoints.values())
    got = replay(topo, pattern_plan("all_reduce", eids, 256 << 10, 1, "ring", planes=2, slices=2))
    return got, got.fabric.sim.events


def test_transmit_ahead_changes_nothing_but_the_event_count(monkeypatch: pytest.MonkeyPatch) -> None:
    per_frame, events_per_frame = _ring(monkeypatch, 0)
    ahead, events_ahead = _ring(monkeypatch, AHEAD_NS)
    rows = [asdict(f) for f in per_frame.result.flows]
    assert rows and all(r["delivered"] == r["npkts"] for r in rows)
    assert [asdict(f) for f in ahead.result.flows] == rows
    assert ahead.metrics.records == per_frame.metrics.records
    assert events_ahead < 0.8 * events_per_frame  # one NIC event per µs of frames instead of one per frame
