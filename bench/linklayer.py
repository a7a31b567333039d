"""What LLR costs the emulated switch: forwarding rate over one link with and without LLR, side by side.

    sudo .venv/bin/python bench/linklayer.py [--seconds 2] [--offered 150000] [--rounds 2] [--pipeline both]
    .venv/bin/python bench/linklayer.py --in-process   # LLR's own CPU per frame, no namespaces (no root)

Two `p4exec switch` processes in a line, h1 - A - B - h2 (basic_l3.p4, 10.0.2.0/24 routed to port 2 on both),
on veths in throw-away namespaces (`ethsw-*`, removed afterwards). The A-B link runs LLR at both ends
(`--link-layer '{"llr": ...}' --link-layer-ports` A:2, B:1): A shims and buffers every frame, B checks the
sequence and acknowledges; the host links stay plain (the hosts speak no LLR). The same line then runs without
the link layer. The two alternate for `--rounds` rounds (so load drift hits both alike); per frame size the
median delivered packets/s of each and their ratio are printed, and the two switch processes' CPU time per
forwarded packet (less sensitive to a shared machine's load than the rate), with the LLR counters (ACKs,
NAKs, replays, best-effort frames). At FER 0 a NAK means B's receive ring overflowed under the offered
overload (the kernel dropped frames there): LLR takes that for a loss on the link and goes back N, as it
should; best-effort frames mean A's replay buffer was full, i.e. B acknowledged late.

LLR's ACK timer is the emulated fabric's (×1000 the nominal: 1 ms); its replay timer is 1 s: an overloaded
switch B reads its receive ring (thousands of frames) hundreds of ms late, which no hardware receiver does,
and replays of what B has yet to read would measure a retry storm, not LLR's work. Late ACKs then show as
best-effort frames (A's 512-frame replay buffer full), which cost LLR only the shim.
`--pipeline python|native|both` (default: the switch's own default): on the native pipeline a port without
the link layer takes a burst of frames in a few calls into C, a port with it takes them one by one (LinkPort
first), so the ratio there holds that too; the Python pipeline has no batches, so its ratio is LLR's own work.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.switch import frame, offer  # noqa: E402
from p4exec.switch.lab import Lab, SwitchProcess, sh  # noqa: E402

PROGRAM = ROOT / "p4src" / "basic_l3.p4"
LLR = {"llr": {"ack_delay_ns": 1_000_000, "replay_timeout_ns": 1_000_000_000}}
SIZES = (64, 1500)


class Line:
    """h1 - A - B - h2: the Lab's two host veths plus one veth pair between the switches (root namespace)."""

    def __init__(self, lab: Lab) -> None:
        self.lab = lab
        self.a_if, self.b_if = f"ethsw{lab.tag}ab", f"ethsw{lab.tag}ba"

    def __enter__(self) -> Line:
        sh("ip", "link", "add", self.a_if, "type", "veth", "peer", "name", self.b_if)
        for iface in (self.a_if, self.b_if):
            sh("sysctl", "-qw", f"net.ipv6.conf.{iface}.disable_ipv6=1", check=False)
            sh("ip", "link", "set", iface, "up")
        return self

    def __exit__(self, *exc: object) -> None:
        sh("ip", "link", "del", self.a_if, check=False)

    def switch(self, name: str, ports: tuple[str, str], grpc: str, stats: Path, llr_port: int | None,
               pipeline: str | None) -> SwitchProcess:
        cmd = [sys.executable, "-m", "p4exec.switch", "-i", f"1@{ports[0]}", "-i", f"2@{ports[1]}",
               "--device-id", "1", "--grpc-server-addr", grpc, "--stats-file", str(stats), "--no-p4"]
        if pipeline is not None:
            cmd += ["--pipeline", pipeline]
        if llr_port is not None:
            cmd += ["--link-layer", json.dumps(LLR), "--link-layer-ports", str(llr_port), "--link-name", name]
        return SwitchProcess(cmd)


class _Clock:
    """A clock that stands still and runs nothing: the ACK timer never fires, `ack_every` decides."""

    def now_ns(self) -> int:
        return 0

    def at(self, t_ns: int, fn: object, *args: object) -> None:
        pass


class _Wire:
    """Hands each frame to a port's `receive` at once (the other end of the link)."""

    def __init__(self) -> None:
        self.peer: object = None

    def send(self, frame: bytes, start_ns: float) -> bool:
        self.peer.receive(frame)  # type: ignore[attr-defined]
        return True


def in_process(frames: int = 200_000, rounds: int = 5) -> None:
    """LLR's CPU per frame in this process: a LinkPort sending through one with LLR receiving and
    acknowledging (every 16 frames, the default), against the same two calls with the link layer off — the
    work a switch adds per frame at each end of an LLR link, without sockets, pipeline or scheduler."""
    from linklayer import LinkLayerConfig, LinkPort

    frame64 = bytes(range(64))
    results = {}
    for name, raw in (("absent", {"frame_error_rate": 0.0}), ("llr", {"llr": True})):
        cfg = LinkLayerConfig.parse(raw)
        best = float("inf")
        for _ in range(rounds):
            ab, ba = _Wire(), _Wire()
            a, b = LinkPort(cfg, _Clock(), ab, "a:1"), LinkPort(cfg, _Clock(), ba, "b:1")
            ab.peer, ba.peer = b, a
            if name == "absent":  # no link layer: the wire alone (what a port does without one)
                send = ab.send
            else:
                send = a.send
            t0 = time.perf_counter()
            for _ in range(frames):
                send(frame64, 0.0)
            best = min(best, (time.perf_counter() - t0) / frames * 1e6)
        results[name] = best
    print(f"in process, {frames} 64 B frames, best of {rounds}: {results['absent']:.2f} us/frame without a link "
          f"layer, {results['llr']:.2f} us with LLR (send: shim + replay buffer; receive: sequence check + strip; "
          f"one ACK per 16 back, which frees 16 frames): LLR adds {results['llr'] - results['absent']:.2f} us "
          f"per frame for the two ends")


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process so far (/proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def route(grpc: str) -> None:
    """basic_l3.p4 over P4Runtime, 10.0.2.0/24 to port 2."""
    from controller.artifacts import build_artifacts
    from controller.client import SwitchConnection

    artifacts = build_artifacts(PROGRAM, "p4exec")
    with SwitchConnection(grpc, device_id=1, p4info=artifacts.p4info, timeout=30.0) as sw:
        sw.set_pipeline(device_config=artifacts.device_config)
        sw.insert(sw.table_entry("ipv4_lpm", {"hdr.ipv4.dstAddr": "10.0.2.0/24"}, "ipv4_forward",
                                 {"dstAddr": 0x020202, "port": 2}))


def one_run(lab: Lab, line: Line, llr: bool, pipeline: str | None, args: argparse.Namespace, tmp: Path) -> dict:
    """Both switches up (LLR on A:2 and B:1, or no link layer), routes in, each size offered; their rates."""
    grpc = {"A": f"unix:{tmp}/a.sock", "B": f"unix:{tmp}/b.sock"}
    stats = {"A": tmp / "a.stats.json", "B": tmp / "b.stats.json"}
    for path in stats.values():
        path.unlink(missing_ok=True)
    procs = [line.switch("A", (lab.sw_if(1), line.a_if), grpc["A"], stats["A"], 2 if llr else None, pipeline),
             line.switch("B", (line.b_if, lab.sw_if(2)), grpc["B"], stats["B"], 1 if llr else None, pipeline)]
    res: dict = {}
    try:
        for p in procs:
            p.wait_ready()
        for name in ("A", "B"):
            route(grpc[name])
        for size in SIZES:
            fr = frame(size)
            offer(lab, fr, 2000, 0.2, tmp, rings=False)  # warm-up
            cpu0 = sum(cpu_s(p.pid) for p in procs)
            sent, got, span = offer(lab, fr, args.offered, args.seconds, tmp, rings=False)  # as its history
            cpu = sum(cpu_s(p.pid) for p in procs) - cpu0
            res[size] = (sent, got, got / span if span else 0.0, cpu * 1e6 / got if got else 0.0)
    finally:
        for p in procs:
            p.close()
    counters: dict[str, int] = {}
    for name, port in (("A", "2"), ("B", "1")):
        try:
            ll = json.loads(stats[name].read_text()).get("link_layer", {}).get(port, {})
        except (OSError, ValueError):
            ll = {}
        for k, v in ll.items():
            counters[k] = counters.get(k, 0) + v
    res["llr"] = counters
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--offered", type=float, default=150_000, help="offered load, packets/s")
    ap.add_argument("--rounds", type=int, default=2, help="alternations of (no link layer, LLR)")
    ap.add_argument("--pipeline", choices=("python", "native", "both"), default=None,
                    help="the switches' pipeline (default: their default); both: each, alternated too")
    ap.add_argument("--in-process", action="store_true", help="only LLR's CPU per frame in this process")
    args = ap.parse_args()
    if args.in_process:
        in_process()
        return 0
    if os.geteuid() != 0:
        print("bench/linklayer.py needs root (namespaces, raw sockets)", file=sys.stderr)
        return 2
    if not 1 <= args.rounds <= 10 or not 0 < args.seconds <= 30 or not 0 < args.offered <= 2e6:
        print("bench/linklayer.py: --rounds 1..10, --seconds (0, 30], --offered (0, 2e6]", file=sys.stderr)
        return 2
    pipelines: list[str | None] = ["python", "native"] if args.pipeline == "both" else [args.pipeline]
    runs: dict[tuple[str | None, bool], list[dict]] = {(p, llr): [] for p in pipelines for llr in (False, True)}
    with tempfile.TemporaryDirectory(prefix="ethsw-llr-") as tmpdir, Lab() as lab, Line(lab) as line:
        tmp = Path(tmpdir)
        for _ in range(args.rounds):
            for pipeline in pipelines:
                for llr in (False, True):
                    runs[(pipeline, llr)].append(one_run(lab, line, llr, pipeline, args, tmp))
    print(f"h1 - A - B - h2 (basic_l3.p4), offered {args.offered:.0f} packets/s for {args.seconds:g} s, "
          f"{args.rounds} alternating rounds; LLR on the A-B link at both ends")
    print("forwarded packets/s (what h2 received over its receive span), and the two switch processes' CPU time "
          "per forwarded packet (A + B, µs): medians of the rounds")
    print(f"{'pipeline':>9} {'frame':>6} {'plain pps':>10} {'LLR pps':>10} {'LLR/plain':>10} {'plain CPU':>10} "
          f"{'LLR CPU':>8} {'ratio':>6}   per round pps (plain / LLR)")
    for pipeline in pipelines:
        for size in SIZES:
            plain = [r[size][2] for r in runs[(pipeline, False)]]
            with_llr = [r[size][2] for r in runs[(pipeline, True)]]
            mp, ml = statistics.median(plain), statistics.median(with_llr)
            cp = statistics.median(r[size][3] for r in runs[(pipeline, False)])
            cl = statistics.median(r[size][3] for r in runs[(pipeline, True)])
            rounds = ", ".join(f"{a:.0f}/{b:.0f}" for a, b in zip(plain, with_llr, strict=True))
            print(f"{pipeline or 'default':>9} {size:>5}B {mp:>10.0f} {ml:>10.0f} {ml / mp if mp else 0:>10.2f} "
                  f"{cp:>10.1f} {cl:>8.1f} {cl / cp if cp else 0:>6.2f}   {rounds}")
    keys = ("llr_tx_ok", "llr_rx_ok", "llr_tx_ack", "llr_tx_nak", "llr_replays", "llr_replay_timeouts",
            "llr_tx_replay", "llr_tx_best_effort", "llr_tx_discard")
    for pipeline in pipelines:
        total: dict[str, int] = {}
        for r in runs[(pipeline, True)]:
            for k, v in r["llr"].items():
                total[k] = total.get(k, 0) + v
        print(f"LLR counters, {pipeline or 'default'} LLR runs (A:2 and B:1): "
              + ", ".join(f"{k} {total.get(k, 0)}" for k in keys))
    return 0


if __name__ == "__main__":
    sys.exit(main())
