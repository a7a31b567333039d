"""Evidence for one of BMv2's losses that no P4 counter sees (docs/difftest.md, "BMv2's invisible losses").

simple_switch drops a packet whose standard_metadata.priority is not below its number of priority queues.
ethplus.p4 sends ETH+ acks at priority 7: with BMv2's default of one queue every ack vanishes, and
rx_port_counter counts it while tx_port_counter and the drop counters do not. With --priority-queues 8
(what difftest uses) the acks get through, as on p4exec. BMv2 1.15.0 takes no --priority-queues: its queue
count is compiled in (8 with SSWITCH_PRIORITY_QUEUEING_ON; without it the priority is ignored), so there every
ack gets through whatever is asked.
"""

from __future__ import annotations

import pytest
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from controller.artifacts import build_artifacts
from difftest.fabric_entries import small_fabric, updates_for
from difftest.randomdiff import ROOT, read_state
from difftest.targets import Bmv2Target, EmbeddedTarget
from difftest.toolchain import skip_reason
from p4src.wire import ETHERTYPE_ETHPLUS, PKT_ACK
from topologies.bmv2_launch import SWITCH, accepts_priority_queues
from traffic.layers import EthPlus

needs_bmv2 = pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")
ACKS = 20


def _ack_to_h2(view) -> bytes:
    by_eid = {ep.eid: ep for ep in view.topo.endpoints.values()}
    return bytes(Ether(dst=by_eid[2].interfaces[0].mac, src=by_eid[1].interfaces[0].mac, type=ETHERTYPE_ETHPLUS)
                 / EthPlus(pkt_type=PKT_ACK, dst_id=2, src_id=1, hop_limit=8) / Raw(bytes(64)))


def _acks_through(target, view) -> tuple[int, dict]:
    target.conn.write(updates_for("ethplus", target.conn, view))
    frame = _ack_to_h2(view)
    for _ in range(ACKS):
        target.send(1, frame)
    out = target.collect(ACKS)
    return len(out), read_state(target.conn)


@pytest.mark.bmv2
@needs_bmv2
@pytest.mark.timeout(300)
@pytest.mark.parametrize(("queues", "delivered"), [(1, 0), (8, ACKS)])
def test_priority_beyond_the_queues_is_dropped_silently(queues: int, delivered: int, tmp_path) -> None:
    view = small_fabric()
    target = Bmv2Target(build_artifacts(ROOT / "p4src" / "ethplus.p4", "bmv2", tmp_path), max_wait_s=2.0,
                        priority_queues=queues)
    try:
        got, state = _acks_through(target, view)
    finally:
        target.close()
    if not accepts_priority_queues(SWITCH):  # a 1.15.0 build: its queue count is not ours to set
        delivered = ACKS
    assert got == delivered
    assert state["counter MyIngress.rx_port_counter"] == {1: (ACKS, ACKS * len(_ack_to_h2(view)))}
    assert state["counter MyIngress.drop_port_counter"] == {}  # no drop the program knows of
    assert sum(p for p, _ in state["counter MyEgress.telemetry.tx_port_counter"].values()) == delivered


@pytest.mark.timeout(300)
def test_p4exec_delivers_the_acks(tmp_path) -> None:
    view = small_fabric()
    target = EmbeddedTarget(build_artifacts(ROOT / "p4src" / "ethplus.p4", "p4exec", tmp_path))
    try:
        got, _ = _acks_through(target, view)
    finally:
        target.close()
    assert got == ACKS
