"""PFC and CBFC state machines and frames, driven by hand on the virtual-time scheduler."""

from __future__ import annotations

from linklayer.cbfc import CBFC_TYPE, WRAP, CbfcBuffer, CbfcGate, credit_frame, parse_credits
from linklayer.config import CbfcConfig, PfcConfig
from linklayer.flow import FlowStats
from linklayer.pfc import (
    MAC_CONTROL_TYPE,
    PFC_OPCODE,
    PfcBuffer,
    PfcGate,
    parse_pause,
    pause_frame,
    quanta_ns,
)
from vfabric.events import Simulator

MAC = bytes.fromhex("02e500010002")


class Side:
    def __init__(self) -> None:
        self.frames: list[bytes] = []
        self.wakes = 0
        self.holds: list[bool] = []

    def send_link_control(self, frame: bytes) -> None:
        self.frames.append(frame)

    def wake(self) -> None:
        self.wakes += 1

    def held(self, on: bool) -> None:
        self.holds.append(on)


def test_pause_frame_is_802_1qbb() -> None:
    f = pause_frame(MAC, {3: 0xFFFF, 5: 0})
    assert len(f) == 60 and f[:6] == bytes.fromhex("0180c2000001") and f[6:12] == MAC
    assert int.from_bytes(f[12:14], "big") == MAC_CONTROL_TYPE and int.from_bytes(f[14:16], "big") == PFC_OPCODE
    assert int.from_bytes(f[16:18], "big") == 0b101000  # class enable vector: priorities 3 and 5
    assert parse_pause(f) == {3: 0xFFFF, 5: 0}
    assert parse_pause(credit_frame(MAC, 256, [0] * 8)) is None
    assert quanta_ns(1, 100e9) == 5.12


def test_pfc_buffer_pauses_at_xoff_resumes_at_xon_and_refreshes() -> None:
    sim, side, st = Simulator(), Side(), FlowStats()
    cfg = PfcConfig(xoff_bytes=3000, xon_bytes=1000, headroom_bytes=2000, quanta=1000, priorities=(0, 3))
    buf = PfcBuffer(cfg, side, sim, 100e9, MAC, st)
    assert buf.admit(3, 1500) and buf.admit(3, 1500) and not side.frames
    assert buf.admit(3, 1500)  # crosses XOFF
    assert [parse_pause(f) for f in side.frames] == [{3: 1000}]
    assert not buf.admit(3, 1500) and st.buffer_drops == 1  # 6000 > 5000: beyond the headroom
    assert buf.admit(1, 9000)  # a lossy priority is not accounted
    sim.run(until_ns=int(quanta_ns(1000, 100e9) / 2) + 1)  # half the pause: still above XON, pause again
    assert [parse_pause(f) for f in side.frames] == [{3: 1000}, {3: 1000}]
    buf.release(3, 1500)
    buf.release(3, 1500)
    assert len(side.frames) == 2  # 1500 B still above XON
    buf.release(3, 1500)
    assert parse_pause(side.frames[-1]) == {3: 0} and st.pause_frames == 3  # XON
    assert buf.held[3] == 0


def test_pfc_gate_holds_until_expiry_or_resume() -> None:
    sim, side, st = Simulator(), Side(), FlowStats()
    gate = PfcGate(PfcConfig(), side, sim, 100e9, st)
    assert gate.on_control(pause_frame(MAC, {0: 100}))  # 100 quanta at 100G = 512 ns
    assert not gate.may_send(0, 1500) and gate.may_send(1, 1500)
    sim.run(until_ns=600)
    assert gate.may_send(0, 1500) and side.wakes == 1 and st.paused_ns == 512
    paused_at = sim.now
    gate.on_control(pause_frame(MAC, {0: 0xFFFF}))
    sim.run(until_ns=700)
    assert not gate.may_send(0, 1500)
    gate.on_control(pause_frame(MAC, {0: 0}))  # XON before the pause runs out
    assert gate.may_send(0, 1500) and st.paused_ns == 512 + sim.now - paused_at and st.pause_received == 3
    assert not gate.on_control(credit_frame(MAC, 256, [0] * 8))


def test_pfc_watchdog_breaks_an_endless_pause() -> None:
    sim, side, st = Simulator(), Side(), FlowStats()
    gate = PfcGate(PfcConfig(watchdog_ns=10_000, quanta=1000), side, sim, 100e9, st)

    def keep_pausing() -> None:  # a deadlocked peer refreshes its pause forever
        gate.on_control(pause_frame(MAC, {2: 1000}))
        if sim.now < 40_000:
            sim.after(2000, keep_pausing)

    sim.at(0, keep_pausing)
    sim.run(until_ns=9_999)
    assert not gate.may_send(2, 64)
    sim.run(until_ns=10_001)
    assert gate.may_send(2, 64) and st.watchdog_storms == 1 and st.paused_ns == 10_000
    sim.run(until_ns=19_999)
    assert gate.may_send(2, 64)  # pauses ignored while released
    sim.run(until_ns=60_000)
    assert st.watchdog_storms == 2  # paused again after the release, and found again


def test_credit_frame_carries_absolute_counters() -> None:
    f = credit_frame(MAC, 256, [1, 2, WRAP + 3, 0, 0, 0, 0, 7])
    assert len(f) == 60 and int.from_bytes(f[12:14], "big") == CBFC_TYPE == 0x8808
    assert parse_credits(f) == [1, 2, 3, 0, 0, 0, 0, 7]
    assert parse_credits(pause_frame(MAC, {0: 1})) is None


def test_cbfc_sender_needs_credits_for_the_whole_frame_and_a_lost_update_is_repaired() -> None:
    sim, side, st = Simulator(), Side(), FlowStats()
    cfg = CbfcConfig(cell_bytes=256, credits=12, update_interval_ns=100, vc_map=(0, 0, 1, 1, 2, 2, 3, 3))
    gate = CbfcGate(cfg, side, sim, st)
    assert gate.may_send(0, 1538)  # 7 cells
    gate.sent(0, 1538)
    assert not gate.may_send(1, 1538)  # priority 1 shares VC 0: 5 cells left
    assert gate.may_send(2, 1538)  # another VC
    rx_side = Side()
    rx = CbfcBuffer(cfg, rx_side, sim, MAC, FlowStats())
    assert rx.admit(0, 1538)
    rx.release(0, 1538)
    sim.run(until_ns=100)
    assert len(rx_side.frames) == 1
    rx_side.frames.clear()  # the update is lost on the wire
    sim.run(until_ns=1000)  # the repeats carry the same absolute count
    assert rx_side.frames and all(parse_credits(f) == [7, 0, 0, 0, 0, 0, 0, 0] for f in rx_side.frames)
    sim.at(sim.now, lambda: None)
    gate.on_control(rx_side.frames[-1])
    assert gate.credits(0) == 12 and gate.may_send(1, 1538) and side.wakes == 1
    assert st.credit_stall_ns > 0
    gate.on_control(rx_side.frames[-1])  # a duplicate changes nothing
    assert gate.credits(0) == 12


def test_cbfc_counters_wrap() -> None:
    sim, side, st = Simulator(), Side(), FlowStats()
    cfg = CbfcConfig(cell_bytes=64, credits=100)
    gate = CbfcGate(cfg, side, sim, st)
    gate.used[0] = gate.freed[0] = WRAP - 10  # long-running link: the counters are about to wrap
    gate.sent(0, 64 * 30)
    assert gate.credits(0) == 70
    gate.on_control(credit_frame(MAC, 64, [(WRAP - 10 + 30) % WRAP] + [0] * 7))
    assert gate.credits(0) == 100


def test_flow_control_rides_on_part_1s_link_port() -> None:
    """PFC over two LinkPorts: b's buffer crosses XOFF, its pause goes through b's `send_control`, a's port
    hands it to a's gate (the frame never reaches what a passes up), and a's priority is held."""
    from linklayer.attach import on_link_port
    from tests.linklayer.test_port import pair

    raw = {"flow_control": "pfc", "pfc": {"xoff_bytes": 3000, "xon_bytes": 1000, "headroom_bytes": 4000}}
    sim, a, b, got = pair(raw)
    cfg = a.config
    woken: list[str] = []
    fa = on_link_port(cfg, a, sim, 400e9, MAC, lambda: woken.append("a"))
    fb = on_link_port(cfg, b, sim, 400e9, MAC, lambda: woken.append("b"))
    assert fa is not None and fb is not None
    for _ in range(3):
        assert fb.rx.admit(0, 1500)
    sim.run(until_ns=2000)
    assert not a.may_send(0, 1500) and a.may_send(1, 1500) and got == []
    assert a.counters.control_rx == 1 and fb.stats.pause_frames == 1
    for _ in range(3):
        fb.rx.release(0, 1500)
    sim.run(until_ns=4000)
    assert a.may_send(0, 1500) and woken == ["a"] and fa.stats.paused_ns > 0
