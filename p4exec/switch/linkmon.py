"""Link-state events from rtnetlink, so the switch learns of carrier changes and vanished interfaces at once.

Polling sysfs for every port costs CPU all the time (a 128-port switch read 640 files a second); a
netlink socket subscribed to RTMGRP_LINK costs nothing until a link changes.
"""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass

NETLINK_ROUTE = 0
RTMGRP_LINK = 1
RTM_NEWLINK = 16
RTM_DELLINK = 17
IFF_UP = 0x1
IFF_LOWER_UP = 0x10000
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
