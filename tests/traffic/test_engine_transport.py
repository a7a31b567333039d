"""The reliable transports in the replay engine, for real on veth namespaces: ACK/NAK frames cross the lab,
tail drops by tbf are repaired, and what the unreliable engine only counted now costs time."""

from __future__ import annotations

import re

import pytest

from tests.support.realtime import real_time
from traffic.collectives import make_schedule
from traffic.engine import Engine, PlannedCollective
from traffic.metrics import summarize
from traffic.netns import sh
from traffic.records import ns

# real namespaces and veth pairs (and real-time rates): the full suite, not the fast tier
pytestmark = pytest.mark.netns


@pytest.mark.parametrize("transport", ["rc-gbn", "sr"])
def test_clean_ring_all_reduce_acks_and_no_retransmission(bridge_lab, transport: str) -> None:
    _lab, ports = bridge_lab
    s = make_schedule("all_reduce", [0, 1, 2, 3], 200_000, "ring", slices=2)
    cfg = real_time(flow_rate_bps=300e6, time_limit_ns=ns(10), transport=transport, transport_params={"rto_s": 2.0})
    with Engine(ports, cfg) as eng:
        r = eng.run([PlannedCollective("ar", 0, s)])
    assert not r.timed_out
    assert all(f.complete and f.delivered == f.npkts for f in r.flows)
    assert sum(f.delivered_bytes for f in r.flows) == s.total_bytes()
    assert all(f.feedback_sent > 0 and f.feedback_received > 0 for f in r.flows)
    assert sum(f.retransmitted for f in r.flows) == 0, [(f.retransmitted, f.timeouts, f.naks, f.tx_dropped) for f in r.flows]
    rec = summarize(r).records[0]
    assert rec["complete"] and rec["retransmitted"] == 0 and rec["goodput_GBps"] > 0
    assert rec["feedback_frames"] == sum(f.feedback_sent for f in r.flows)


def _incast(lab, ports, transport: str):
    lab.shape(0, "8mbit", burst="8kb", limit="12kb")
    try:
        s = make_schedule("incast", [0, 1, 2, 3], 100_000)  # 3 x 100 KB into host 0
        cfg = real_time(flow_rate_bps=30e6, time_limit_ns=ns(20), loss_grace_ns=ns(0.3), transport=transport,
                        transport_params={"rto_s": 0.02, "rto_init_s": 0.05, "ack_delay_s": 0.001,
                                          "max_timeouts": 30})
        with Engine(ports, cfg) as eng:
            r = eng.run([PlannedCollective("incast", 0, s)])
        stats = sh("ip", "netns", "exec", lab.bridge_ns, "tc", "-s", "qdisc", "show", "dev",
                   lab.bridge_port(0)).stdout
    finally:
        sh("ip", "netns", "exec", lab.bridge_ns, "tc", "qdisc", "del", "dev", lab.bridge_port(0), "root")
    return s, r, int(re.search(r"dropped (\d+)", stats).group(1))


@pytest.mark.parametrize("transport", ["rc-gbn", "sr"])
def test_tail_drops_repaired_every_byte_delivered(bridge_lab, transport: str) -> None:
    lab, ports = bridge_lab
    s, r, tc_dropped = _incast(lab, ports, transport)
    assert tc_dropped > 0 and not r.timed_out
    assert all(f.complete and not f.failed for f in r.flows)
    assert sum(f.delivered_bytes for f in r.flows) == s.total_bytes()
    retx = sum(f.retransmitted for f in r.flows)
    # every dropped data frame had to be sent again (go-back-N resends more than that)
    assert retx >= tc_dropped
    if transport == "sr":
        assert retx <= 2 * tc_dropped + 3
    rec = summarize(r).records[0]
    assert rec["complete"] and rec["bytes_delivered"] == rec["bytes_scheduled"]
    assert rec["throughput_GBps"] > rec["goodput_GBps"]  # retransmissions crossed the wire too


def test_unreliable_incast_is_reported_incomplete(bridge_lab) -> None:
    lab, ports = bridge_lab
    _s, r, tc_dropped = _incast(lab, ports, "none")
    assert tc_dropped > 0
    rec = summarize(r).records[0]
    assert not rec["complete"] and rec["retransmitted"] == 0
    assert summarize(r).summary["transport"] == "none"
