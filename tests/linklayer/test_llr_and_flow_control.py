"""LLR's replay timer on a link that PFC keeps pausing, in virtual time.

One 100 Gbit/s link a -> b: a sends at line rate whenever its gate lets it; b holds what it received in a
PFC buffer it drains at a quarter of the line rate, so b pauses a again and again. Frame errors hit only the
data direction (b's receive side), so every loss is a data frame and every replay it costs is answered to a
NAK: the replay timer has nothing to repair. Before the fix the timer did replay — a frame sent into an empty
buffer after a pause inherited the deadline of a frame long acknowledged — and during a pause it replayed
frames the peer already had when an ACK was lost (the second test).
"""

from __future__ import annotations

from collections import deque
from typing import Any

from linklayer import LinkLayerConfig, LinkPort, shim
from linklayer.attach import on_link_port
from linklayer.pfc import pause_frame
from linklayer.port import wire_bytes
from vfabric.events import Simulator
from vfabric.links import Channel, Link

RATE = 100e9
DELAY_NS = 500
MAC = bytes.fromhex("02e500010002")
PFC = {"xoff_bytes": 20_000, "xon_bytes": 10_000, "headroom_bytes": 40_000}


def frame(i: int, n: int = 1000) -> bytes:
    return bytes(6) + bytes.fromhex("020000000001") + b"\x88\xb5" + i.to_bytes(4, "big") + bytes(n - 18)


def _take(port: LinkPort, f: bytes) -> None:
    """A frame arrives at a port whose node passes nothing up (it only answers with ACKs, NAKs, pauses)."""
    port.receive(f)


class PausedLink:
    """a -> b with LLR and PFC; b's errors only (its receive side); b drains at `drain_bps`."""

    def __init__(self, fer: float, count: int, drain_bps: float = RATE / 4, seed: int = 7) -> None:
        self.sim = sim = Simulator()
        cfg = LinkLayerConfig.parse({"frame_error_rate": fer, "llr": True, "flow_control": "pfc", "pfc": PFC})
        link = Link(sim, "a<->b", RATE, DELAY_NS)
        self.got: list[bytes] = []
        ports: dict[str, LinkPort] = {}
        ab = Channel(link, lambda _p, f: self._at_b(ports["b"].receive(f)), 0)
        ba = Channel(link, lambda _p, f: _take(ports["a"], f), 0)
        self.a = ports["a"] = LinkPort(cfg, sim, ab, "a:1", seed, errors=False)
        self.b = ports["b"] = LinkPort(cfg, sim, ba, "b:1", seed)
        fa = on_link_port(cfg, self.a, sim, RATE, MAC, self._kick)
        fb = on_link_port(cfg, self.b, sim, RATE, MAC, lambda: None)
        assert fa is not None and fb is not None
        self.fa, self.fb = fa, fb
        self.count, self.sent, self.busy, self.waiting = count, 0, 0.0, False
        self.drain_ns_per_byte = 8e9 / drain_bps
        self.queue: deque[int] = deque()
        self.draining = False
        sim.at(0, self._kick)

    def _kick(self) -> None:
        """a's transmitter: the next frame when the wire is free and the gate lets priority 0 go."""
        if self.waiting or self.sent >= self.count:
            return
        now = self.sim.now
        if self.busy > now:
            self.waiting = True
            self.sim.at(int(self.busy) + 1, self._wake)
            return
        f = frame(self.sent)
        if not self.a.may_send(0, wire_bytes(len(f))):
            return  # the gate wakes us
        self.a.gate.sent(0, wire_bytes(len(f)))  # type: ignore[union-attr]
        self.busy = self.a.send(f, float(now))
        self.sent += 1
        self.waiting = True
        self.sim.at(int(self.busy) + 1, self._wake)

    def _wake(self) -> None:
        self.waiting = False
        self._kick()

    def _at_b(self, f: bytes | None) -> None:
        if f is None:
            return
        self.got.append(f)
        n = wire_bytes(len(f))
        assert self.fb.rx.admit(0, n), "beyond the headroom"
        self.queue.append(n)
        if not self.draining:
            self._drain()

    def _drain(self) -> None:
        """b's egress: one held frame out every frame time at the drain rate, freeing its bytes."""
        if not self.queue:
            self.draining = False
            return
        self.draining = True
        n = self.queue.popleft()
        self.sim.at(self.sim.now + int(n * self.drain_ns_per_byte), self._drained, n)

    def _drained(self, n: int) -> None:
        self.fb.rx.release(0, n)
        self._drain()

    def run(self) -> PausedLink:
        self.sim.run()
        return self


def test_replays_under_pfc_are_those_errors_cause() -> None:
    """Every replay answers a gap a corrupted data frame left (a NAK); none comes from the timer; nothing
    discarded."""
    n = 4000
    run = PausedLink(fer=2e-3, count=n).run()
    ca, cb, st = run.a.counters, run.b.counters, run.fa.stats
    assert run.got == [frame(i) for i in range(n)]  # nothing lost, nothing twice, in order
    assert st.pause_received > 20 and st.paused_ns > 0  # the link was paused again and again
    # data frames were corrupted; each gap b saw cost one NAK and one replay (a frame corrupted behind a gap is
    # repaired by the same go-back-N replay)
    assert 0 < cb.llr_tx_nak <= cb.rx_bad
    assert ca.llr_replays == ca.llr_rx_nak == cb.llr_tx_nak == cb.llr_rx_missing_seq
    assert ca.llr_replay_timeouts == 0 and ca.llr_tx_discard == 0
    assert not run.a.tx.buf  # type: ignore[union-attr]


def test_no_spurious_replays_under_pfc_without_errors() -> None:
    run = PausedLink(fer=0.0, count=4000).run()
    assert run.fa.stats.pause_received > 20
    assert run.a.counters.llr_replays == 0 and run.a.counters.llr_tx_discard == 0


def test_a_pause_holds_the_replay_timer() -> None:
    """b's ACKs are lost while b pauses a for far longer than the replay timeout: the timer replays nothing
    during the pause, and once the pause ends (nothing else sent) one replay a whole timeout later repairs
    the lost acknowledgement."""
    sim = Simulator()
    cfg = LinkLayerConfig.parse({"llr": {"replay_timeout_ns": 5_000}, "flow_control": "pfc", "pfc": PFC})
    link = Link(sim, "a<->b", RATE, DELAY_NS)
    ports: dict[str, LinkPort] = {}
    drop_acks = {"on": True}

    def to_a(_p: Any, f: bytes) -> None:
        if drop_acks["on"] and f[12:14] == b"\x88\xb6":
            return  # an LLR ACK lost on the way back
        ports["a"].receive(f)

    ab = Channel(link, lambda _p, f: _take(ports["b"], f), 0)
    ba = Channel(link, to_a, 0)
    a = ports["a"] = LinkPort(cfg, sim, ab, "a:1", errors=False)
    b = ports["b"] = LinkPort(cfg, sim, ba, "b:1", errors=False)
    fa = on_link_port(cfg, a, sim, RATE, MAC, lambda: None)
    assert fa is not None and on_link_port(cfg, b, sim, RATE, MAC, lambda: None) is not None
    quanta = 0xFFFF  # 335 us at 100 Gbit/s
    sim.at(0, b.send_control, pause_frame(MAC, {0: quanta}))
    for i in range(3):  # in flight before the pause lands
        sim.at(0, a.send, frame(i), float(i * 100))
    sim.run(until_ns=20_000)
    drop_acks["on"] = False
    resume_at = 200_000
    sim.at(resume_at, b.send_control, pause_frame(MAC, {0: 0}))
    sim.run(until_ns=resume_at - 1)
    assert not a.may_send(0, 1000) and a.tx.buf  # type: ignore[union-attr]  # paused, frames unacknowledged
    assert a.counters.llr_replay_timeouts == 0 and a.counters.llr_replays == 0  # 40 timeouts long: no replay
    sim.run()
    assert a.may_send(0, 1000) and not a.tx.buf  # type: ignore[union-attr]
    assert a.counters.llr_replay_timeouts == a.counters.llr_replays == 1 and a.counters.llr_tx_discard == 0
    assert b.counters.llr_rx_duplicate_seq == 3  # the replay: three frames b already had, acknowledged again


def test_a_credit_stall_does_not_hold_the_replay_timer() -> None:
    """CBFC with credits for four frames: frame 2 is corrupted, so b drops frames 3 and 4 behind the gap and
    never frees their cells, and b's NAK is lost too. a then has no credits — the stall waits for the cells
    only a replay brings back — so the replay timer must replay during the stall (were a credit stall to hold
    it as a PFC pause does, nothing would ever move again)."""
    sim = Simulator()
    cell = wire_bytes(1000)
    cfg = LinkLayerConfig.parse({"llr": {"replay_timeout_ns": 5_000}, "flow_control": "cbfc",
                                 "cbfc": {"cell_bytes": cell, "credits": 4, "update_interval_ns": 100}},
                                max_frame=cell)
    link = Link(sim, "a<->b", RATE, DELAY_NS)
    ports: dict[str, LinkPort] = {}
    got: list[bytes] = []
    lost = {"data": False, "nak": False}
    fb_box: list[Any] = []

    def to_b(_p: Any, f: bytes) -> None:
        if not lost["data"] and shim.is_llr(f) and shim.strip(f) == frame(2):
            lost["data"] = True  # frame 2's first copy fails its FCS
            return
        up = ports["b"].receive(f)
        if up is not None:
            got.append(up)
            rx = fb_box[0].rx
            assert rx.admit(0, cell)
            sim.at(sim.now + 10, rx.release, 0, cell)  # b's node forwards it at once

    def to_a(_p: Any, f: bytes) -> None:
        if not lost["nak"] and shim.is_llr(f) and shim.parse(f)[0] == shim.NAK:
            lost["nak"] = True
            return
        ports["a"].receive(f)

    a = ports["a"] = LinkPort(cfg, sim, Channel(link, to_b, 0), "a:1", errors=False)
    b = ports["b"] = LinkPort(cfg, sim, Channel(link, to_a, 0), "b:1", errors=False)
    sent: list[int] = []
    busy = [0.0]

    def kick() -> None:
        """a's transmitter: while credits last, the next of 12 frames."""
        while len(sent) < 12 and a.may_send(0, cell):
            a.gate.sent(0, cell)  # type: ignore[union-attr]
            busy[0] = a.send(frame(len(sent)), max(float(sim.now), busy[0]))
            sent.append(len(sent))

    fa = on_link_port(cfg, a, sim, RATE, MAC, kick)
    fb = on_link_port(cfg, b, sim, RATE, MAC, lambda: None)
    assert fa is not None and fb is not None
    fb_box.append(fb)
    sim.at(0, kick)
    sim.run(until_ns=1_000_000)
    assert lost == {"data": True, "nak": True}
    assert got == [frame(i) for i in range(12)]  # everything, in order, once
    assert fa.stats.credit_stall_ns > 0 and a.counters.llr_replay_timeouts >= 1
