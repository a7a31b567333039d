"""Forwarding rate of `p4exec switch` between two veths, next to a plain-Python AF_PACKET forwarder.

    sudo .venv/bin/python bench/switch.py [--seconds 2] [--offered 150000] [--program p4src/basic_l3.p4]
    sudo .venv/bin/python bench/switch.py --program p4src/ethplus.p4   # what the fabrics run (ETH+ frames)

Both forwarders run on the same veths (namespaces `ethsw-*`, removed afterwards). A sender in host 1's
namespace offers a fixed load (packets/s, 64 B and 1500 B frames) for a few seconds; a counter in host 2's
namespace measures what arrives. Printed per size: delivered packets/s of each, the ratio, and a no-loss run of
p4exec at the target rate (30k 64-byte packets/s), plus the switch's RSS (VmRSS/VmHWM from /proc).
"""

from __future__ import annotations

import argparse
import os
import select
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from p4exec.switch.lab import Lab, SwitchProcess, switch_env  # noqa: E402
from p4exec.switch.nsio import write_frames  # noqa: E402

TARGET_PPS = 30_000
GRPC_ADDR = "127.0.0.1:59931"


def plain_forwarder(if1: str, if2: str) -> None:
    """The baseline: copy every frame from if1 to if2, nothing else (child process)."""
    socks = []
    for iface in (if1, if2):
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
        s.bind((iface, 3))
        s.setsockopt(socket.SOL_SOCKET, 33, 8 << 20)  # SO_RCVBUFFORCE
        s.setsockopt(263, 23, 1)  # PACKET_IGNORE_OUTGOING
        s.setblocking(False)
        socks.append(s)
    rx, tx = socks
    ep = select.epoll()
    ep.register(rx.fileno(), select.EPOLLIN)
    print("p4exec switch ready (plain forwarder)", file=sys.stderr, flush=True)
    send, recv = tx.send, rx.recv
    while True:
        ep.poll(0.5)
        try:
            for _ in range(64):
                send(recv(65536))
        except BlockingIOError:
            pass


def frame(size: int) -> bytes:
    from scapy.all import IP, UDP, Ether, Raw

    base = Ether(dst="00:00:00:00:00:aa", src="00:00:00:00:01:01") / IP(src="10.0.1.1", dst="10.0.2.2", ttl=64)
    pkt = base / UDP(sport=1234, dport=5678)
    return bytes(pkt / Raw(b"\x00" * max(0, size - len(pkt))))


def push_ethplus(program: Path) -> bytes:
    """ethplus.p4 as the fabrics run it: the fabric controller installs a one-switch `line` topology (h1 on
    port 1, h2 on port 2, ECMP policy); returns an ETH+ data frame from h1's endpoint to h2's (64 B)."""
    from controller.artifacts import build_artifacts
    from controller.fabric import FabricController
    from controller.policies import make_policy
    from topologies import load
    from traffic.frames import Addr, ethplus_template

    topo = load("line", n=1)
    artifacts = build_artifacts(program, "p4exec")
    ctl = FabricController(topo, {"s1": GRPC_ADDR}, artifacts, make_policy("ecmp"), watch_switches=False,
                           port_poll_s=None)
    try:
        ctl.start()
    finally:
        ctl.close()
    by_host = {ep.host: ep for ep in topo.endpoints.values()}
    src, dst = (next(Addr(i.mac, i.ipv4, ep.eid, plane) for plane, i in ep.interfaces.items())
                for ep in (by_host["h1"], by_host["h2"]))
    return bytes(ethplus_template(src, dst, flow=7, payload_len=0).buf)


def push_basic_l3(program: Path) -> None:
    """Load the program over P4Runtime and route 10.0.2.0/24 to port 2."""
    from controller.client import SwitchConnection
    from p4exec.switch.program import load_program

    config = program.read_bytes()
    p4info = load_program(config).p4info
    from p4.v1 import p4runtime_pb2 as pb

    tbl = next(t for t in p4info.tables if t.preamble.name == "MyIngress.ipv4_lpm")
    act = next(a for a in p4info.actions if a.preamble.name == "MyIngress.ipv4_forward")
    entry = pb.TableEntry(table_id=tbl.preamble.id)
    fm = entry.match.add(field_id=tbl.match_fields[0].id)
    fm.lpm.value, fm.lpm.prefix_len = bytes([10, 0, 2, 0]), 24
    entry.action.action.action_id = act.preamble.id
    values = {"dstAddr": (0x020202, 6), "port": (2, 2)}
    for p in act.params:
        value, nbytes = values[p.name]
        entry.action.action.params.add(param_id=p.id, value=value.to_bytes(nbytes, "big"))
    with SwitchConnection(GRPC_ADDR, device_id=1, p4info=p4info, timeout=30.0) as sw:  # connects
        sw.set_pipeline(device_config=config)
        sw.insert(entry)


def offer(lab: Lab, fr: bytes, pps: float, seconds: float, tmp: Path) -> tuple[int, int, float]:
    """(sent, received, receive span in s) for `pps` offered during `seconds`."""
    fpath = tmp / "frames.bin"
    write_frames(str(fpath), [fr])
    n = int(pps * seconds)
    rx = subprocess.Popen(lab.nsio(2, "recv", lab.host_if(2), str(tmp / "out.bin"), "--discard",
                                   "--max-seconds", str(seconds + 15), "--count", str(n), "--idle", "1.0"),
                          stdout=subprocess.PIPE, text=True, env=switch_env())
    assert rx.stdout is not None
    rx.stdout.readline()
    tx = subprocess.run(lab.nsio(1, "send", lab.host_if(1), str(fpath), "--repeat", str(n), "--rate", str(pps),
                                 "--max-seconds", str(seconds)),
                        capture_output=True, text=True, env=switch_env(), timeout=seconds * 3 + 30)
    out, _ = rx.communicate(timeout=seconds + 30)
    sent = int(tx.stdout.split()[1])
    _, got, span = out.split()
    return sent, int(got), float(span)


def resize(base: bytes, size: int) -> bytes:
    """The template frame padded (or cut) to `size` bytes on the wire (without FCS)."""
    return base[:size] + bytes(max(0, size - len(base)))


def measure(lab: Lab, cmd: list[str], program: Path | None, sizes: list[int], args, tmp: Path,
            base: bytes | None = None) -> dict:
    """Forwarding rate per size; with `program`, load it first (basic_l3: one route; ethplus: the fabric
    controller's entries) and send the frame that program forwards."""
    proc = SwitchProcess(cmd)
    res: dict = {}
    try:
        proc.wait_ready()
        if program is not None:
            if program.name == "ethplus.p4":
                base = push_ethplus(program)
            else:
                push_basic_l3(program)
        res["base"] = base
        for size in sizes:
            fr = resize(base, size) if base is not None else frame(size)
            offer(lab, fr, 2000, 0.2, tmp)  # warm-up (first packets compile caches, fill ARP-less paths)
            sent, got, span = offer(lab, fr, args.offered, args.seconds, tmp)
            res[size] = (sent, got, got / span if span else 0.0)
        if program is not None:
            res["noloss"] = offer(lab, resize(base, 64) if base is not None else frame(64), TARGET_PPS,
                                  args.seconds, tmp)
        res["rss"] = proc.rss_kb()
    finally:
        proc.close()
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--offered", type=float, default=150_000, help="offered load, packets/s")
    ap.add_argument("--program", type=Path, default=ROOT / "p4src" / "basic_l3.p4")
    ap.add_argument("--plain-forwarder", nargs=2, metavar=("IF1", "IF2"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.plain_forwarder:
        plain_forwarder(*args.plain_forwarder)
        return 0
    if os.geteuid() != 0:
        print("bench/switch.py needs root (namespaces, raw sockets)", file=sys.stderr)
        return 2
    sizes = [64, 1500]
    tmp = Path(os.environ.get("TMPDIR", "/tmp")) / f"ethsw-bench-{os.getpid()}"
    tmp.mkdir(parents=True, exist_ok=True)
    with Lab() as lab:
        sw_cmd = lab.switch_cmd("--device-id", "1", "--grpc-server-addr", GRPC_ADDR)
        p4 = measure(lab, sw_cmd, args.program, sizes, args, tmp)
        plain_cmd = [sys.executable, __file__, "--plain-forwarder", lab.sw_if(1), lab.sw_if(2)]
        plain = measure(lab, plain_cmd, None, sizes, args, tmp, base=p4["base"])  # the same frames
    for f in tmp.iterdir():
        f.unlink()
    tmp.rmdir()

    print(f"offered {args.offered:.0f} packets/s for {args.seconds:g} s; program {args.program.name}")
    print(f"{'frame':>6} {'plain pps':>11} {'p4exec pps':>11} {'ratio':>6}   sent/received plain, p4exec")
    for size in sizes:
        psent, pgot, ppps = plain[size]
        sent, got, spps = p4[size]
        print(f"{size:>5}B {ppps:>11.0f} {spps:>11.0f} {spps / ppps if ppps else 0:>6.2f}   "
              f"{psent}/{pgot}, {sent}/{got}")
    sent, got, span = p4["noloss"]
    loss = sent - got
    verdict = "PASS" if loss == 0 and got / max(span, 1e-9) >= TARGET_PPS * 0.95 else "FAIL"
    print(f"no-loss run: 64B at {TARGET_PPS} pps offered: sent {sent}, received {got}, lost {loss} "
          f"-> {verdict} (target {TARGET_PPS} pps without loss)")
    rss, hwm = p4["rss"]
    print(f"p4exec switch RSS {rss / 1024:.1f} MB (peak {hwm / 1024:.1f} MB) -> "
          f"{'PASS' if hwm <= 100 * 1024 else 'FAIL'} (target <= 100 MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
