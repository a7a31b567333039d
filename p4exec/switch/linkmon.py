"""Link-state events from rtnetlink, so the switch learns of carrier changes and vanished interfaces at once.

Polling sysfs for every port costs CPU all the time (a 128-port switch read 640 files a second); a
netlink socket subscribed to RTMGRP_LINK costs nothing until a link changes.

But every link of the namespace is in that group: when 48 switches start at once, each puts its 128 ports in
promiscuous mode, and each of those 6,144 flag changes used to be read and parsed by every switch (0.2 s of CPU
each, rising with the square of the fabric). A socket filter drops, in the kernel, the events that change
nothing but the promiscuous/all-multicast flags; carrier changes (sent with no change mask), new and deleted
links still arrive.
"""

from __future__ import annotations

import ctypes
import socket
import struct
from dataclasses import dataclass

NETLINK_ROUTE = 0
RTMGRP_LINK = 1
RTM_NEWLINK = 16
RTM_DELLINK = 17
IFF_UP = 0x1
IFF_PROMISC = 0x100
IFF_ALLMULTI = 0x200
IFF_LOWER_UP = 0x10000
SO_ATTACH_FILTER = 26
IFLA_IFNAME = 3
_NLMSG = struct.Struct("=IHHII")
_IFINFO = struct.Struct("=BxHiII")
_RTA = struct.Struct("=HH")


@dataclass(frozen=True)
class LinkEvent:
    ifindex: int
    name: str | None
    up: bool  # administratively up and carrier present
    deleted: bool


class LinkMonitor:
    """A non-blocking rtnetlink socket; `read()` returns the link events waiting on it."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW | socket.SOCK_NONBLOCK, NETLINK_ROUTE)
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
            attach_filter(self.sock, flag_noise_filter())
            self.sock.bind((0, RTMGRP_LINK))
        except OSError:
            self.sock.close()
            raise

    def fileno(self) -> int:
        return self.sock.fileno()

    def read(self) -> list[LinkEvent]:
        events: list[LinkEvent] = []
        while True:
            try:
                data = self.sock.recv(1 << 16)
            except BlockingIOError:
                return events
            except OSError:  # ENOBUFS: events were lost; the caller's periodic check catches up
                return events
            events.extend(parse(data))

    def close(self) -> None:
        self.sock.close()


def _be16(v: int) -> int:
    """A host-order u16 as a classic-BPF absolute load sees it (loads are big-endian)."""
    return int.from_bytes(struct.pack("=H", v), "big")


def _be32(v: int) -> int:
    return int.from_bytes(struct.pack("=I", v & 0xFFFFFFFF), "big")


def flag_noise_filter() -> list[tuple[int, int, int, int]]:
    """Classic BPF: drop RTM_NEWLINK whose change mask is non-zero and only promiscuous/all-multicast bits."""
    ld_h, ld_w, jeq, and_k, ret = 0x28, 0x20, 0x15, 0x54, 0x06
    keep, drop = 0xFFFFFFFF, 0
    return [
        (ld_h, 0, 0, 4),  # nlmsg_type
        (jeq, 0, 4, _be16(RTM_NEWLINK)),  # not NEWLINK: keep
        (ld_w, 0, 0, _NLMSG.size + 12),  # ifi_change
        (jeq, 2, 0, 0),  # no change mask (carrier, state): keep
        (and_k, 0, 0, _be32(~(IFF_PROMISC | IFF_ALLMULTI))),
        (jeq, 1, 0, 0),  # nothing but those flags changed: drop
        (ret, 0, 0, keep),
        (ret, 0, 0, drop),
    ]


def attach_filter(sock: socket.socket, program: list[tuple[int, int, int, int]]) -> None:
    insns = b"".join(struct.pack("=HBBI", code, jt, jf, k) for code, jt, jf, k in program)
    buf = ctypes.create_string_buffer(insns, len(insns))
    sock.setsockopt(socket.SOL_SOCKET, SO_ATTACH_FILTER, struct.pack("HL", len(program), ctypes.addressof(buf)))


def parse(data: bytes) -> list[LinkEvent]:
    out: list[LinkEvent] = []
    off = 0
    while off + _NLMSG.size <= len(data):
        length, mtype, _flags, _seq, _pid = _NLMSG.unpack_from(data, off)
        if length < _NLMSG.size:
            break
        if mtype in (RTM_NEWLINK, RTM_DELLINK) and length >= _NLMSG.size + _IFINFO.size:
            body = off + _NLMSG.size
            _family, _type, index, flags, _change = _IFINFO.unpack_from(data, body)
            name = None
            a = body + _IFINFO.size
            end = off + length
            while a + _RTA.size <= end:
                alen, atype = _RTA.unpack_from(data, a)
                if alen < _RTA.size:
                    break
                if atype == IFLA_IFNAME:
                    name = data[a + _RTA.size : a + alen].split(b"\0", 1)[0].decode(errors="replace")
                a += (alen + 3) & ~3
            up = bool(flags & IFF_UP) and bool(flags & IFF_LOWER_UP)
            out.append(LinkEvent(index, name, up, mtype == RTM_DELLINK))
        off += (length + 3) & ~3
    return out
