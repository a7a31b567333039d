"""Arrivals at hosts accounted ahead of their instant, in batches by one event at the earliest waiting arrival
(Channel.early, VirtualEndpoints.defer_arrival), instead of by an arrival event each: an event-count saving
(and less host code between the switch pipeline's runs) that changes no record —
metrics.json, flows.csv and links.csv byte-identical with and without it, on an all-to-all that loses frames
at full queues (flows given up after the loss grace) and on one cut off by the virtual-time limit."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.vfabric.test_partitions import FILES, _run, _spec
from vfabric.hosts import VirtualEndpoints


@pytest.mark.parametrize("limit_s", [0.01, 3e-6])
def test_early_delivery_changes_nothing_but_the_event_count(limit_s: float, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    raw = _spec(virtual={"time_limit_s": limit_s, "queue_depth": 8})
    early, v_early = _run(raw, 1, tmp_path / "early")
    with monkeypatch.context() as m:
        m.setattr(VirtualEndpoints, "early_delivery_allowed", lambda self: False)
        late, v_late = _run(raw, 1, tmp_path / "late")
    for name in FILES:
        assert early[name] == late[name], name
    assert v_early["pipeline_packets"] == v_late["pipeline_packets"] > 0
    assert v_early["events"] < v_late["events"]
    if limit_s < 1e-3:
        assert v_early["stopped_by"] == "virtual_time_limit"
    else:
        assert b",False," in early["flows.csv"]  # some flows lost frames at the 8-packet queues
