"""Frame I/O inside a network namespace, run as `ip netns exec NS python nsio.py ...`.

The tests and bench/switch.py build frames with scapy in the test process and hand them over as files of
length-prefixed frames; this helper only sends and captures, with raw AF_PACKET
sockets, so it starts fast and adds no scapy time to the measurements.

  send IFACE FILE [--rate PPS] [--repeat N] [--max-seconds S] [--ring]
  recv IFACE OUT --max-seconds S [--count N] [--idle S] [--ring --discard]   (prints "ready" once bound)

`--ring` (the benchmark's load generator and counter) moves frames through a TPACKET_V2 ring shared with the
kernel instead of one system call per frame: the sender fills a transmit ring and hands each pacing tick's
frames over in one `send`, past the qdisc (PACKET_QDISC_BYPASS); the counter reads a receive ring and takes
the first and last arrival times from the kernel's own stamps. Both leave the CPU to what is measured.
"""

from __future__ import annotations

import argparse
import errno
import mmap
import select
import socket
import struct
import time

ETH_P_ALL = 3
PACKET_OUTGOING = 4
SEND_RETRIES = 10_000  # x 0.5 ms: how long one frame may wait for a full kernel queue

SOL_PACKET = 263
PACKET_RX_RING = 5
PACKET_VERSION = 10
PACKET_TX_RING = 13
PACKET_QDISC_BYPASS = 20
PACKET_IGNORE_OUTGOING = 23
TPACKET_V2 = 1
TP_STATUS_AVAILABLE = 0
TP_STATUS_USER = 1          # receive ring: the slot holds a frame for us
TP_STATUS_SEND_REQUEST = 1  # transmit ring: the slot holds a frame for the kernel
TP_STATUS_WRONG_FORMAT = 4
TX_DATA = 32  # TPACKET_ALIGN(sizeof(struct tpacket2_hdr)): where a transmit slot's frame starts
RING_SLOT = 2048
RING_SLOTS = 4096
_T2 = struct.Struct("IIIHHII")  # struct tpacket2_hdr: status, len, snaplen, mac, net, sec, nsec
_REQUEST = struct.pack("I", TP_STATUS_SEND_REQUEST)
_FREE = bytes(4)


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


class TxRing:
    """A TPACKET_V2 transmit ring on one interface: a frame is written into a shared slot and marked for the
    kernel; one `flush` (a `send` with no data) transmits every marked slot. Protocol 0: it receives nothing,
    and past the qdisc no tap sees its frames either."""

    def __init__(self, iface: str, largest: int, slots: int = RING_SLOTS) -> None:
        slot = RING_SLOT
        while slot < largest + TX_DATA:
            slot *= 2
        block = max(slot, 1 << 16)
        slots = max(slots - slots % (block // slot), block // slot)
        sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
        try:
            sock.setsockopt(SOL_PACKET, PACKET_VERSION, TPACKET_V2)
            try:
                sock.setsockopt(SOL_PACKET, PACKET_QDISC_BYPASS, 1)
            except OSError:
                pass  # an older kernel: through the qdisc, as a plain send goes
            sock.setsockopt(SOL_PACKET, PACKET_TX_RING, struct.pack("IIII", block, slots * slot // block, slot, slots))
            self.mm = mmap.mmap(sock.fileno(), slots * slot, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
            sock.bind((iface, 0))
        except OSError:
            sock.close()
            raise
        self.sock, self.iface, self.slot, self.slots = sock, iface, slot, slots
        self.idx = 0
        self.held: list[bytes | None] = [None] * slots  # the frame each slot holds (a repeated frame is not rewritten)

    def put(self, frame: bytes) -> bool:
        """Mark `frame` for sending; False when the next slot is still the kernel's (the ring is full)."""
        idx = self.idx
        off = idx * self.slot
        mm = self.mm
        if mm[off] != TP_STATUS_AVAILABLE:
            return False
        if self.held[idx] is not frame:
            mm[off + TX_DATA : off + TX_DATA + len(frame)] = frame
            mm[off + 4 : off + 8] = struct.pack("I", len(frame))  # tp_len
            self.held[idx] = frame
        mm[off : off + 4] = _REQUEST
        self.idx = idx + 1 if idx + 1 < self.slots else 0
        return True

    def flush(self) -> None:
        """Hand every marked slot to the kernel (without waiting for the transmissions to end)."""
        try:
            self.sock.send(b"", socket.MSG_DONTWAIT)
        except (BlockingIOError, InterruptedError):
            pass
        except OSError as exc:
            if exc.errno != errno.ENOBUFS:
                raise

    def drain(self, timeout: float = 5.0) -> int:
        """Flush until the kernel has every slot back; the frames it refused (malformed), or -1 on timeout."""
        end = time.monotonic() + timeout
        while True:
            self.flush()
            states = [self.mm[i * self.slot] for i in range(self.slots)]
            if all(st in (TP_STATUS_AVAILABLE, TP_STATUS_WRONG_FORMAT) for st in states):
                return states.count(TP_STATUS_WRONG_FORMAT)
            if time.monotonic() > end:
                return -1
            time.sleep(0.0005)

    def close(self) -> None:
        self.mm.close()
        self.sock.close()


def send_ring(args: argparse.Namespace, frames: list[bytes]) -> tuple[int, float]:
    """`send` through a transmit ring: each pacing tick (1 ms) marks the frames due by then and flushes once.
    Returns (frames sent, seconds from the first to the last hand-over)."""
    ring = TxRing(args.iface, max(map(len, frames)))
    total = args.repeat * len(frames)
    nf = len(frames)
    t0 = time.perf_counter()
    stop_at = t0 + args.max_seconds if args.max_seconds else None
    n = stalls = 0
    try:
        while n < total:
            now = time.perf_counter()
            if stop_at is not None and now > stop_at:
                break
            due = total if not args.rate else min(total, int((now - t0) * args.rate) + 1)
            put = ring.put
            start = n
            while n < due and put(frames[n % nf]):
                n += 1
            ring.flush()
            if n < due:  # the ring is full: the kernel still transmits, wait a little (bounded)
                stalls = 0 if n > start else stalls + 1
                if stalls >= SEND_RETRIES:
                    raise OSError(errno.ENOBUFS, f"{args.iface}: the transmit ring stayed full for 5 s")
                time.sleep(0.0005)
            elif n < total and args.rate:
                time.sleep(0.001)  # the next tick: a millisecond's frames leave together, as the plain sender's
        elapsed = time.perf_counter() - t0
        refused = ring.drain()
        if refused < 0:
            raise OSError(errno.ETIMEDOUT, f"{args.iface}: the kernel kept transmit slots for 5 s")
    finally:
        ring.close()
    return n - refused, elapsed


def cmd_send(args: argparse.Namespace) -> None:
    frames = read_frames(args.file)
    if args.ring:
        sent, elapsed = send_ring(args, frames)
        print(f"sent {sent} {elapsed:.6f}", flush=True)
        return
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


def recv_ring(args: argparse.Namespace) -> None:
    """`recv --discard` through a receive ring: frames are counted in shared memory (no system call per frame)
    and the span runs from the kernel's stamp of the first to that of the last."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.setsockopt(SOL_PACKET, PACKET_VERSION, TPACKET_V2)
    s.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
    s.setsockopt(SOL_PACKET, PACKET_RX_RING, struct.pack("IIII", 1 << 16, RING_SLOTS * RING_SLOT >> 16,
                                                         RING_SLOT, RING_SLOTS))
    mm = mmap.mmap(s.fileno(), RING_SLOTS * RING_SLOT, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    s.bind((args.iface, ETH_P_ALL))
    s.setblocking(False)
    print("ready", flush=True)
    got = idx = 0
    first = last_stamp = None
    start = time.monotonic()
    last = None
    unpack = _T2.unpack_from
    while not _recv_done(args, start, last, got):
        r, _, _ = select.select([s], [], [], 0.05)
        if not r:
            continue
        off = -1
        while mm[idx * RING_SLOT] & TP_STATUS_USER:
            off = idx * RING_SLOT
            if first is None:
                first = unpack(mm, off)[5:]
            mm[off : off + 4] = _FREE
            got += 1
            idx = idx + 1 if idx + 1 < RING_SLOTS else 0
        if off >= 0:
            last_stamp = _T2.unpack_from(mm, off)[5:]
            last = time.monotonic()
    span = (last_stamp[0] - first[0]) + (last_stamp[1] - first[1]) / 1e9 if first and last_stamp else 0.0
    mm.close()
    s.close()
    print(f"received {got} {span:.6f}", flush=True)


def _recv_done(args: argparse.Namespace, start: float, last: float | None, got: int) -> bool:
    """A receiver's bounds: its time limit, the count asked for, or idle for `--idle` seconds after a frame."""
    now = time.monotonic()
    if now - start > args.max_seconds or (args.count and got >= args.count):
        return True
    return last is not None and bool(args.idle) and now - last > args.idle


def cmd_recv(args: argparse.Namespace) -> None:
    if args.ring:
        if not args.discard:
            raise SystemExit("nsio recv: --ring only counts (use it with --discard)")
        recv_ring(args)
        return
    s = raw_socket(args.iface)
    s.setblocking(False)
    print("ready", flush=True)
    frames: list[bytes] = []
    stamps: list[float] = []
    start = time.monotonic()
    last = None
    while not _recv_done(args, start, last, len(frames)):
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
    ps.add_argument("--ring", action="store_true", help="through a transmit ring, one system call per tick")
    pr = sub.add_parser("recv")
    pr.add_argument("iface")
    pr.add_argument("out")
    pr.add_argument("--max-seconds", type=float, default=10.0)
    pr.add_argument("--count", type=int, default=0)
    pr.add_argument("--idle", type=float, default=0.0)
    pr.add_argument("--discard", action="store_true", help="only count (benchmarks)")
    pr.add_argument("--ring", action="store_true", help="count in a receive ring (with --discard)")
    args = p.parse_args()
    {"send": cmd_send, "recv": cmd_recv}[args.cmd](args)


if __name__ == "__main__":
    main()
