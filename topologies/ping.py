"""ICMP echo from many network namespaces at once, from this one process.

`ping -c1` per pair starts thousands of processes for a reachability check of a 512-host fabric, and on
two cores their start-up makes echoes miss their deadline although the path works. Here one thread opens a
raw ICMP socket inside each namespace (topologies.netns: the socket stays there), then sends every echo
request and reads every reply from here. It is still the kernel of the source host that sends and routes the
request and the destination's kernel that answers it, through the fabric's switches.

Bounded in count and time: each target gets one request per call; at most `window` requests per source are
in flight; a request not answered within `timeout_s` has failed; the call never runs past `max_s`.
"""

from __future__ import annotations

import os
import select
import socket
import struct
import time
from dataclasses import dataclass, field

from topologies.netns import entered, named

ICMP_ECHO_REQUEST = 8
ICMP_ECHO_REPLY = 0
_HDR = struct.Struct("!BBHHH")
_RCVBUF = 4 << 20
SO_RCVBUFFORCE = 33


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    total = (total >> 16) + (total & 0xFFFF)
    total += total >> 16
    return ~total & 0xFFFF


def echo_request(ident: int, seq: int, payload: bytes) -> bytes:
    head = _HDR.pack(ICMP_ECHO_REQUEST, 0, 0, ident, seq)
    return _HDR.pack(ICMP_ECHO_REQUEST, 0, _checksum(head + payload), ident, seq) + payload


@dataclass
class _Source:
    netns: str
    sock: socket.socket
    ident: int
    targets: list[str]
    next: int = 0  # index of the next target to send to
    sent_at: dict[int, float] = field(default_factory=dict)  # in flight: seq -> send time
    answered: set[int] = field(default_factory=set)
    failed: set[int] = field(default_factory=set)

    @property
    def done(self) -> bool:
        return self.next >= len(self.targets) and not self.sent_at


def open_icmp(netns: str) -> socket.socket:
    """A raw ICMP socket inside the named namespace (root only)."""
    with entered(named(netns)):
        sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, _RCVBUF)
    except OSError:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, _RCVBUF)
    sock.setblocking(False)
    return sock


def ping_many(targets: dict[str, list[str]], timeout_s: float = 2.0, window: int = 4,
              max_s: float = 120.0) -> dict[str, set[str]]:
    """From each named namespace, one echo request to each of its target IPv4 addresses; returns, per
    namespace, the addresses that did not answer within `timeout_s` (or before `max_s` ran out)."""
    payload = os.urandom(8) + b"ethlab-p"  # tells our echoes from anyone else's in the same namespace
    sources: dict[int, _Source] = {}
    ep = select.epoll()
    try:
        for i, (netns, ips) in enumerate(targets.items()):
            if not ips:
                continue
            if len(ips) > 0xFFFF:
                raise ValueError(f"{netns}: at most 65535 targets per call (the echo sequence number)")
            sock = open_icmp(netns)
            src = _Source(netns, sock, (os.getpid() + i) & 0xFFFF, list(ips))
            sources[sock.fileno()] = src
            ep.register(sock.fileno(), select.EPOLLIN)
        _run(sources, ep, payload, timeout_s, window, time.monotonic() + max_s)
    finally:
        ep.close()
        for src in sources.values():
            src.sock.close()
    return {src.netns: {src.targets[k] for k in range(len(src.targets)) if k not in src.answered}
            for src in sources.values()}


def _run(sources: dict[int, _Source], ep: select.epoll, payload: bytes, timeout_s: float, window: int,
         hard_deadline: float) -> None:
    busy = list(sources.values())
    while busy and time.monotonic() < hard_deadline:
        now = time.monotonic()
        for src in busy:
            for seq, sent in list(src.sent_at.items()):  # expire
                if now - sent > timeout_s:
                    del src.sent_at[seq]
                    src.failed.add(seq)
            while len(src.sent_at) < window and src.next < len(src.targets):  # fill the window
                seq = src.next
                src.next += 1
                try:
                    src.sock.sendto(echo_request(src.ident, seq, payload), (src.targets[seq], 0))
                    src.sent_at[seq] = time.monotonic()
                except OSError:  # no route, buffer full: that pair failed
                    src.failed.add(seq)
        for fd, _ev in ep.poll(0.01):
            _drain(sources[fd], payload)
        busy = [s for s in busy if not s.done]


def _drain(src: _Source, payload: bytes) -> None:
    while True:
        try:
            data, (addr, _port) = src.sock.recvfrom(2048)
        except (BlockingIOError, InterruptedError):
            return
        ihl = (data[0] & 0x0F) * 4 if data else 0
        icmp = data[ihl:]
        if len(icmp) < _HDR.size + len(payload):
            continue
        kind, _code, _sum, ident, seq = _HDR.unpack_from(icmp)
        if kind != ICMP_ECHO_REPLY or ident != src.ident or icmp[_HDR.size:_HDR.size + len(payload)] != payload:
            continue
        if seq in src.sent_at and seq < len(src.targets) and src.targets[seq] == addr:
            del src.sent_at[seq]
            src.answered.add(seq)
