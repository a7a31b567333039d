"""Frames that reach a switch in the same nanosecond share one event (Channel.early into
VirtualSwitch.defer_arrival): fewer events, and no record changes — metrics.json, flows.csv and links.csv are
byte-identical to one arrival event per frame, on an all-to-all whose incast queues drop and fill (events
of the same instant interleave with the arrivals there), with a reliable transport's feedback and
retransmissions, with a congestion reaction, and with a link failure during the run."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.vfabric.test_partitions import FILES, _run, _spec
from vfabric.switch import VirtualSwitch

RELIABLE = {"transport": "sr", "transport_params": {"rto_s": 20e-6, "rto_init_s": 20e-6, "ack_delay_s": 1e-6,
                                                    "reorder_s": 4e-6}}
CASES = {
    "lossy": {},
    "reliable": {"engine": RELIABLE},
    "dcqcn": {"engine": {"reaction": "dcqcn"}},
    "link_down": {"engine": RELIABLE, "faults": [{"at_s": 2e-6, "action": "link_down", "a": "gpu1", "b": "p1", "for_s": 3e-6}]},
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_shared_arrival_events_change_no_record(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    raw = _spec(**CASES[case])
    resumed: list[int] = []
    receive_from = VirtualSwitch._receive_from

    def counting(self: VirtualSwitch, due: list, i: int) -> None:
        if i:
            resumed.append(i)  # an event of the same instant ran between two frames of one batch
        receive_from(self, due, i)

    with monkeypatch.context() as m:
        m.setattr(VirtualSwitch, "_receive_from", counting)
        shared, v_shared = _run(raw, 1, tmp_path / "shared")
    with monkeypatch.context() as m:
        m.setattr(VirtualSwitch, "defer_arrival", lambda self, port, frame, arrive, place: False)  # an event each
        alone, v_alone = _run(raw, 1, tmp_path / "alone")
    for name in FILES:
        assert shared[name] == alone[name], name
    assert v_shared["pipeline_packets"] == v_alone["pipeline_packets"] > 0
    assert v_shared["events"] < v_alone["events"]
    if case == "lossy":
        assert resumed, "no batch was interrupted by an event of its instant: the ordering rule went untested"
