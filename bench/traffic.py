"""Sustained send rate of the traffic engine next to a bare AF_PACKET sender loop, on the same veth pair.

Both send 1514-byte RoCEv2 frames from one namespace to another. The raw loop only calls send() on one
prebuilt frame; the engine also paces, stamps sequence numbers, tracks dependencies and receives and
accounts every frame at the other end, in the same single thread; with `rc-gbn` it also sends a coalesced ACK
back for every 8 frames and handles it at the sender (goal: >= 0.8x the unreliable engine's send+receive rate,
both measured here, same run, same pair; every round is printed with the load average, and the CPU time per
sent frame beside it, which a busy shared machine disturbs less than the rate). Also shown: how fast Scapy builds the
same frame, the reason the engine stamps templates instead. Needs root (creates ethtr-bench-* namespaces
and removes them). Bounded: each measurement stops after a packet count or a few seconds.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from traffic.collectives import make_schedule  # noqa: E402
from traffic.engine import Engine, HostConfig, PlannedCollective  # noqa: E402
from traffic.frames import FORMATS, Addr  # noqa: E402
from traffic.netns import open_packet_socket  # noqa: E402
from traffic.vethlab import VethLab  # noqa: E402

PACKETS = 200_000
SECONDS = 3.0
ROUNDS = 5


def raw_rate(ports) -> float:
    src, dst = ports[(0, 0)], ports[(1, 0)]
    tpl = FORMATS["roce"].build(Addr(src.mac, src.ip), Addr(dst.mac, dst.ip), 1, 1456)
    frame = bytes(tpl.stamp(1, 0, 1, 0))
    tx = open_packet_socket(src.netns, src.ifname)
    sent = 0
    try:
        t0 = time.perf_counter()
        end = t0 + SECONDS
        while sent < PACKETS:
            try:
                tx.send(frame)
                sent += 1
            except BlockingIOError:
                pass
            if sent & 1023 == 0 and time.perf_counter() > end:
                break
        return sent / (time.perf_counter() - t0)
    finally:
        tx.close()


def engine_rate(ports, transport: str = "none") -> tuple[float, float, int, float]:
    """(sent frames per second while sending, delivered / sent, rx socket drops, CPU us per sent frame)."""
    s = make_schedule("incast", [1, 0], PACKETS * 1456)
    # the window must cover what is in flight on a fast veth, else rc-gbn measures its window, not its cost
    cfg = HostConfig(flow_rate_bps=100e9, time_limit_ns=int(SECONDS * 1e9), loss_grace_ns=200_000_000,
                     catch_up_frames=64, max_packets=2_000_000, transport=transport,
                     transport_params={"window": 4096} if transport != "none" else {})
    with Engine(ports, cfg) as eng:
        c0 = os.times()
        r = eng.run([PlannedCollective("bench", 0, s)])
        c1 = os.times()
    f = r.flows[0]
    sending = (f.send_done_ns or 0) - f.start_ns if f.send_done_ns else r.duration_s * 1e9
    cpu_us = (c1.user - c0.user + c1.system - c0.system) / max(f.sent, 1) * 1e6
    return f.sent / (sending / 1e9), f.delivered / max(f.sent, 1), r.rx_socket_drops, cpu_us


def scapy_rate() -> float:
    a, b = Addr("02:e7:00:00:00:01", "10.77.0.1"), Addr("02:e7:00:00:00:02", "10.77.0.2")
    n, t0 = 300, time.perf_counter()
    for i in range(n):
        FORMATS["roce"].build(a, b, i, 1456)
    return n / (time.perf_counter() - t0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=ROUNDS, help="interleaved unreliable/rc-gbn rounds (medians)")
    rounds_n = ap.parse_args().rounds
    if rounds_n < 1:
        ap.error("--rounds must be at least 1")
    lab = VethLab(f"ethtr-b{secrets.token_hex(2)}-", 2, bridge=False)
    ports = lab.up()
    try:
        load0 = os.getloadavg()[0]
        raw = raw_rate(ports)
        # interleaved rounds, median of each: the machine is shared, a background burst hits both alike
        rounds = [(engine_rate(ports), engine_rate(ports, "rc-gbn")) for _ in range(rounds_n)]
        load1 = os.getloadavg()[0]
        eng, delivered, drops, _ = sorted((r[0] for r in rounds), key=lambda x: x[0])[rounds_n // 2]
        gbn, gbn_delivered, gbn_drops, _ = sorted((r[1] for r in rounds), key=lambda x: x[0])[rounds_n // 2]
        pair_ratios = sorted(b[0] / a[0] for a, b in rounds)
        cpu = sorted(r[0][3] for r in rounds)[rounds_n // 2], sorted(r[1][3] for r in rounds)[rounds_n // 2]
    finally:
        lab.down()
    scapy = scapy_rate()
    print(f"{'sender':34s} {'pkts/s':>10s}  {'ratio':>6s}")
    print(f"{'raw AF_PACKET send loop':34s} {raw:10.0f}  {1.0:6.2f}")
    print(f"{'traffic engine (send + receive)':34s} {eng:10.0f}  {eng / raw:6.2f}")
    print(f"{'engine, rc-gbn + ACKs':34s} {gbn:10.0f}  {gbn / raw:6.2f}")
    print(f"{'Scapy frame build (no send)':34s} {scapy:10.0f}  {scapy / raw:6.2f}")
    print(f"engine: {delivered * 100:.1f} % of sent frames received and accounted, rx socket drops {drops}")
    print(f"rc-gbn: {gbn_delivered * 100:.1f} % delivered of sent, rx socket drops {gbn_drops}; "
          f"rc-gbn / unreliable = {gbn / eng:.2f} (goal >= 0.8; per round: "
          f"{', '.join(f'{x:.2f}' for x in pair_ratios)})")
    for i, (a, b) in enumerate(rounds):
        print(f"  round {i + 1}: unreliable {a[0]:8.0f} pkt/s ({a[3]:5.1f} us CPU/frame), rc-gbn {b[0]:8.0f} pkt/s "
              f"({b[3]:5.1f} us CPU/frame), ratio {b[0] / a[0]:.2f}")
    print(f"CPU per sent frame (median): unreliable {cpu[0]:.1f} us, rc-gbn {cpu[1]:.1f} us, "
          f"unreliable / rc-gbn = {cpu[0] / cpu[1]:.2f}; load average {load0:.2f} before, {load1:.2f} after")
    return 0


if __name__ == "__main__":
    sys.exit(main())
