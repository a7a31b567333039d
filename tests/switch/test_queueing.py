"""Traffic manager on the wire: a port limited to R packets/s and offered 2R builds a queue and tail-drops."""

from __future__ import annotations

import pytest
from scapy.all import Ether, Raw

from tests.support.switch import QUEUE_PROBE, compiled, queue_cmd, table_entry

pytestmark = pytest.mark.netns

RATE = 500  # packets/s on port 2
DEPTH = 32  # packets
SECONDS = 2.0


def test_rate_limited_port_queues_and_tail_drops(lab, start_switch, capture, send) -> None:
    sw = start_switch(str(QUEUE_PROBE))
    p4info, _ = compiled(QUEUE_PROBE)
    conn = sw.connect(p4info)
    try:
        # the program was given on the command line: the controller reads it back and adds entries
        conn.insert(table_entry(conn, "MyIngress.port_map", {"standard_metadata.ingress_port": 1},
                                     "MyIngress.set_port", {"port": 2}))
        shown = queue_cmd(sw, "2", "--rate", str(RATE), "--depth", str(DEPTH))
        assert f'"depth": {DEPTH}' in shown and f'"rate_pps": {RATE}' in shown and '"up": true' in shown

        offered = int(2 * RATE * SECONDS)
        frame = bytes(Ether(dst="00:00:00:00:02:02", src="00:00:00:00:01:01", type=0x88B5) / Raw(b"q" * 50))
        cap = capture(2, count=offered, max_seconds=SECONDS + 10, idle=1.0)
        assert send(1, [frame], rate=2 * RATE, repeat=offered) == offered
        got, span = cap.result()

        delivered_rate = (len(got) - 1) / span
        assert abs(delivered_rate - RATE) <= 0.1 * RATE, delivered_rate
        max_enq = conn.read_register("MyEgress.max_enq_qdepth", 2)[2]
        assert DEPTH - 2 <= max_enq <= DEPTH - 1  # the queue filled up (enq_qdepth = packets already waiting)
        # a packet that waited behind a full queue spent about DEPTH/RATE seconds in it
        assert conn.read_register("MyEgress.last_timedelta", 2)[2] > 0.5 * DEPTH / RATE * 1e6
        egress_count = conn.read_counter("MyEgress.egress_count", 2)[2][0]
        assert egress_count == len(got)
    finally:
        conn.close()

    assert sw.stop()  # a clean exit on SIGTERM
    st = sw.stats()
    p1 = st["ports"]["1"]
    assert p1["received"] == offered
    assert p1["forwarded"] == len(got)
    tail = p1["dropped_by_reason"]["queue_full"]
    assert tail > 0.3 * offered  # about half of 2R does not fit
    assert st["queues"]["2"]["tail_drops"] == tail
    assert p1["forwarded"] + p1["dropped"] + p1["to_cpu"] == p1["received"]
