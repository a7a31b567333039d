"""One link between two LinkPorts in virtual time: FCS errors, LLR recovery, the flow-control hooks."""

from __future__ import annotations

import math

from linklayer import LinkLayerConfig, LinkPort, shim
from vfabric.events import Simulator
from vfabric.links import Channel, Link

RATE = 400e9


def pair(raw: dict, seed: int = 1, delay_ns: int = 500) -> tuple[Simulator, LinkPort, LinkPort, list[bytes]]:
    """Ports a and b on one 400 Gbit/s link; what b passes up is collected."""
    sim = Simulator()
    cfg = LinkLayerConfig.parse(raw)
    link = Link(sim, "a<->b", RATE, delay_ns)
    got: list[bytes] = []
    ports: dict[str, LinkPort] = {}

    def deliver_to(name: str, sink: list[bytes] | None):
        def deliver(_port: object, frame: bytes) -> None:
            out = ports[name].receive(frame)
            if out is not None and sink is not None:
                sink.append(out)
        return deliver

    ab = Channel(link, deliver_to("b", got), 0)
    ba = Channel(link, deliver_to("a", None), 0)
    ports["a"] = LinkPort(cfg, sim, ab, "a:1", seed)
    ports["b"] = LinkPort(cfg, sim, ba, "b:1", seed)
    return sim, ports["a"], ports["b"], got


def frame(i: int, n: int = 1000) -> bytes:
    return bytes(6) + bytes.fromhex("020000000001") + b"\x88\xb5" + i.to_bytes(4, "big") + bytes(n - 18)


def blast(sim: Simulator, port: LinkPort, count: int, gap_ns: int = 0) -> None:
    """`count` frames from `port`, back to back at line rate (or one every `gap_ns`)."""
    state = {"i": 0, "end": 0.0}

    def one() -> None:
        i = state["i"]
        if i >= count:
            return
        state["i"] = i + 1
        end = port.send(frame(i), max(state["end"], float(sim.now)))
        state["end"] = end
        sim.at(max(int(end) + (end > int(end)), sim.now + gap_ns), one)

    sim.at(0, one)


def test_no_errors_no_llr_passes_frames_unchanged() -> None:
    sim, a, _b, got = pair({"llr": False, "frame_error_rate": 0.0, "flow_control": "pfc"})
    blast(sim, a, 100)
    sim.run()
    assert got == [frame(i) for i in range(100)]


def test_errors_without_llr_lose_frames() -> None:
    sim, a, b, got = pair({"frame_error_rate": 0.01})
    blast(sim, a, 5000)
    sim.run()
    assert b.counters.rx_bad == 5000 - len(got) > 0
    assert b.counters.llr_rx_ok == 0


def test_llr_repairs_every_error_in_order() -> None:
    n, fer = 20000, 1e-3
    sim, a, b, got = pair({"frame_error_rate": fer, "llr": True})
    blast(sim, a, n)
    sim.run()
    assert got == [frame(i) for i in range(n)]  # nothing lost, nothing twice, in order
    ca, cb = a.counters, b.counters
    assert ca.llr_tx_ok == n and ca.llr_tx_discard == 0 and ca.llr_tx_best_effort == 0
    # one go-back-N replay per corrupted data frame: within a binomial bound of FER x data frames on the wire
    sent = ca.llr_tx_ok + ca.llr_tx_replay
    mean, sd = fer * sent, math.sqrt(sent * fer * (1 - fer))
    assert abs(ca.llr_replays - mean) <= 4 * sd + 2, (ca.llr_replays, mean, sd)
    assert cb.llr_rx_missing_seq >= 1 and cb.llr_rx_duplicate_seq + cb.llr_rx_out_of_seq > 0
    assert not a.tx.buf  # everything acknowledged in the end


def test_lost_tail_recovered_by_the_replay_timer() -> None:
    """Frames far apart: a lost one is only found by the replay timer (nothing follows it soon)."""
    sim, a, _b, got = pair({"frame_error_rate": 0.05, "llr": {"replay_timeout_ns": 3000}})
    blast(sim, a, 300, gap_ns=20_000)
    sim.run()
    assert got == [frame(i) for i in range(300)]
    assert a.counters.llr_replay_timeouts > 0


def test_a_frame_after_an_acknowledged_one_gets_a_whole_timeout() -> None:
    """Each frame acknowledged before the next leaves (one every 3 us; the ACK comes back ~2 us after): no
    error, so no replay. (Before: the next frame inherited the pending deadline of the acknowledged one,
    and 120 of 300 frames were replayed by the timer.)"""
    sim, a, _b, got = pair({"llr": True})
    blast(sim, a, 300, gap_ns=3000)
    sim.run()
    assert got == [frame(i) for i in range(300)]
    assert a.counters.llr_rx_ack == 300 and a.counters.llr_replays == a.counters.llr_replay_timeouts == 0


def test_over_replayed_frames_are_discarded_and_counted() -> None:
    sim, a, b, got = pair({"frame_error_rate": 0.9, "llr": {"max_replays": 1}})
    blast(sim, a, 50)
    sim.run()
    assert a.counters.llr_tx_discard > 0
    assert len(got) < 50 and len(set(got)) == len(got)  # what arrived arrived once
    assert not a.tx.buf


def test_full_replay_buffer_sends_best_effort() -> None:
    sim, a, _b, got = pair({"llr": {"max_outstanding_frames": 4, "ack_every": 64, "ack_delay_ns": 100_000}})
    blast(sim, a, 40)
    sim.run()
    assert a.counters.llr_tx_best_effort > 0
    assert a.counters.llr_tx_ok + a.counters.llr_tx_best_effort == 40
    assert sorted(got) == sorted(frame(i) for i in range(40))


def test_errors_are_deterministic_per_seed_and_port() -> None:
    runs = []
    for seed in (1, 1, 2):
        sim, a, b, got = pair({"frame_error_rate": 0.01, "llr": True}, seed=seed)
        blast(sim, a, 3000)
        sim.run()
        runs.append((b.counters.as_dict(), a.counters.as_dict()))
    assert runs[0] == runs[1] and runs[0] != runs[2]


def test_flow_control_hooks() -> None:
    """A control frame goes to the peer ahead of data and is consumed by the handler of its EtherType;
    rx listeners see what goes up; the gate answers may_send."""
    sim, a, b, got = pair({"flow_control": "pfc"})
    seen: list[bytes] = []
    b.control_handlers[0x8808] = seen.append
    ups: list[bytes] = []
    b.rx_listeners.append(ups.append)
    pause = bytes.fromhex("0180c2000001") + bytes(6) + b"\x88\x08" + bytes(46)
    sim.at(0, a.send_control, pause)
    blast(sim, a, 3)
    sim.run()
    assert seen == [pause] and got == ups == [frame(i) for i in range(3)]
    assert a.counters.control_tx == 1 and b.counters.control_rx == 1

    class Closed:
        def may_send(self, priority: int, nbytes: int) -> bool:
            return priority != 3

        def sent(self, priority: int, nbytes: int) -> None:
            pass

    assert a.may_send(3, 1000)
    a.gate = Closed()
    assert not a.may_send(3, 1000) and a.may_send(0, 1000)
    told: list[int] = []
    a.resume_listeners.append(told.append)
    a.resumed(3)
    assert told == [3]


def test_shim_costs_its_bytes_on_the_wire() -> None:
    sim, a, _b, _got = pair({"llr": True})
    end0 = a.send(frame(0), 0.0)
    assert a.wire.tx_bytes == 1000 + shim.SHIM_BYTES
    assert end0 == (1000 + shim.SHIM_BYTES + 24) * 8e9 / RATE


def inc_frame(i: int, n: int = 200) -> bytes:
    """An in-network aggregation frame: its own EtherType is 0x88B6, the LLR shim's too."""
    return bytes(6) + bytes.fromhex("020000000001") + b"\x88\xb6" + i.to_bytes(4, "big") + bytes(n - 18)


def test_inc_frames_pass_a_port_without_llr_unchanged() -> None:
    sim, a, _b, got = pair({"flow_control": "pfc"})
    for i in range(5):
        sim.at(i * 100, a.send, inc_frame(i), float(i * 100))
    sim.run()
    assert got == [inc_frame(i) for i in range(5)]


def test_inc_frames_keep_their_ethertype_under_llr_even_best_effort() -> None:
    """A replay buffer of one frame: most frames go best effort (PLAIN shim), and every one arrives intact."""
    sim, a, _b, got = pair({"llr": {"max_outstanding_frames": 1}})
    for i in range(20):
        sim.at(i, a.send, inc_frame(i), float(i))
    sim.run()
    assert got == [inc_frame(i) for i in range(20)]
    assert a.counters.llr_tx_best_effort > 0
