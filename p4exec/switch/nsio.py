"""Frame I/O inside a network namespace, run as `ip netns exec NS python nsio.py ...`.

The tests and bench/switch.py build frames with scapy in the test process and hand them over as files of
length-prefixed frames; this helper only sends and captures, with raw AF_PACKET
sockets, so it starts fast and adds no scapy time to the measurements.

  send IFACE FILE [--rate PPS] [--repeat N] [--max-seconds S]
  recv IFACE OUT --max-seconds S [--count N] [--idle S]     (prints "ready" once bound)
"""

from __future__ import annotations

import argparse
import errno
import select
import socket
import struct
import time

ETH_P_ALL = 3
PACKET_OUTGOING = 4
SEND_RETRIES = 10_000  # x 0.5 ms: how long one frame may wait for a full kernel queue


def read_frames(path: str) -> list[bytes]:
    data = open(path, "rb").read()
    out, off = [], 0
    while off < len(data):
        (n,) = struct.unpack_from("!I", data, off)
        out.append(data[off + 4 : off + 4 + n])
        off += 4 + n
    return out


def write_frames(path: str, frames: list[bytes]) -> None:
    with open(path, "wb") as f:
        for fr in frames:
            f.write(struct.pack("!I", len(fr)) + fr)


def raw_socket(iface: str) -> socket.socket:
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((iface, ETH_P_ALL))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8 << 20)
    return s


def cmd_send(args: argparse.Namespace) -> None:
    frames = read_frames(args.file)
    s = raw_socket(args.iface)
    # Paced sending goes in bursts once per millisecond with sleeps in between, so the
    # sender leaves the CPU to the switch (2 cores: sender, switch, receiver).
    per_tick = args.rate / 1000.0 if args.rate else 0.0
    t0 = time.perf_counter()
    stop_at = t0 + args.max_seconds if args.max_seconds else None
    n = 0
    for _ in range(args.repeat):
        if stop_at is not None and time.perf_counter() > stop_at:
            break
        for fr in frames:
            if per_tick:
                due = t0 + n / args.rate
                delay = due - time.perf_counter()
                if delay > 0.001:
                    time.sleep(delay)
            for _attempt in range(SEND_RETRIES):  # bounded: a queue that never drains fails the send
                try:
                    s.send(fr)
                    break
                except BlockingIOError:
                    time.sleep(0.0005)
                except OSError as exc:
                    if exc.errno == errno.ENOBUFS:  # the kernel queue is full, wait a little
                        time.sleep(0.0005)
                        continue
                    raise
            else:
                raise OSError(errno.ENOBUFS, f"{args.iface}: the kernel queue stayed full for 5 s")
            n += 1
    print(f"sent {n} {time.perf_counter() - t0:.6f}", flush=True)


def cmd_recv(args: argparse.Namespace) -> None:
    s = raw_socket(args.iface)
    s.setblocking(False)
    print("ready", flush=True)
    frames: list[bytes] = []
    stamps: list[float] = []
    start = time.monotonic()
    last = None
    while True:
        now = time.monotonic()
        if now - start > args.max_seconds or (args.count and len(frames) >= args.count):
            break
        if last is not None and args.idle and now - last > args.idle:
            break
        r, _, _ = select.select([s], [], [], 0.05)
        if not r:
            continue
        while True:
            try:
                data, addr = s.recvfrom(65536)
            except BlockingIOError:
                break
            if addr[2] == PACKET_OUTGOING:
                continue
            if args.discard:
                frames.append(b"")
            else:
                frames.append(data)
            last = time.monotonic()
            stamps.append(last)
    if not args.discard:
        write_frames(args.out, frames)
    span = (stamps[-1] - stamps[0]) if len(stamps) > 1 else 0.0
    print(f"received {len(frames)} {span:.6f}", flush=True)


def main() -> None:
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    ps = sub.add_parser("send")
    ps.add_argument("iface")
    ps.add_argument("file")
    ps.add_argument("--rate", type=float, default=0.0)
    ps.add_argument("--repeat", type=int, default=1)
    ps.add_argument("--max-seconds", type=float, default=0.0, help="stop sending after this long")
    pr = sub.add_parser("recv")
    pr.add_argument("iface")
    pr.add_argument("out")
    pr.add_argument("--max-seconds", type=float, default=10.0)
    pr.add_argument("--count", type=int, default=0)
    pr.add_argument("--idle", type=float, default=0.0)
    pr.add_argument("--discard", action="store_true", help="only count (benchmarks)")
    args = p.parse_args()
    {"send": cmd_send, "recv": cmd_recv}[args.cmd](args)


if __name__ == "__main__":
    main()
