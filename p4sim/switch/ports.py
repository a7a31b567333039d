"""Switch ports on Linux interfaces through AF_PACKET raw sockets.

One socket per interface, bound to it, promiscuous, non-blocking, with large buffers.
Own transmitted frames are filtered in the kernel (PACKET_IGNORE_OUTGOING) where the
kernel has it, otherwise by the packet type recvfrom reports (PACKET_OUTGOING).
VLAN tags that the kernel stripped into auxdata are put back, so the program sees
the frame as it was on the wire (as BMv2 via libpcap does).
"""

from __future__ import annotations

import errno
import os
import socket
import struct
from dataclasses import dataclass, field

ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_ADD_MEMBERSHIP = 1
PACKET_MR_PROMISC = 1
PACKET_AUXDATA = 8
PACKET_IGNORE_OUTGOING = 23
PACKET_OUTGOING = 4
TP_STATUS_VLAN_VALID = 1 << 4
TP_STATUS_VLAN_TPID_VALID = 1 << 6
SOCK_BUF = 8 << 20
SO_SNDBUFFORCE = 32
SO_RCVBUFFORCE = 33
MAX_FRAME = 65536

# struct tpacket_auxdata: status, len, snaplen, mac, net, vlan_tci, vlan_tpid
_AUX = struct.Struct("IIIHHHH")
_AUX_SPACE = socket.CMSG_SPACE(_AUX.size)

# errno values meaning "the interface is gone or down", not a bug in the switch.
LINK_ERRNOS = {errno.ENETDOWN, errno.ENXIO, errno.ENODEV, errno.EIO}


class PortGone(Exception):
    """The interface of a port went away; the switch drops the port and goes on."""


def parse_interface(spec: str, next_num: int) -> tuple[int, str]:
    """`-i N@IFACE` as simple_switch takes it (a bare IFACE gets the next free number)."""
    if "@" in spec:
        num, iface = spec.split("@", 1)
        return int(num), iface
    return next_num, spec


def link_state(iface: str) -> str:
    """'up', 'down' (no carrier / admin down) or 'gone' (no such interface), from sysfs."""
    base = f"/sys/class/net/{iface}"
    try:
        with open(f"{base}/carrier") as f:
            return "up" if f.read().strip() == "1" else "down"
    except FileNotFoundError:
        return "gone" if not os.path.exists(base) else "down"
    except OSError:
        return "down" if os.path.exists(base) else "gone"


@dataclass
class Port:
    """One switch port: number, interface and its socket."""

    num: int
    iface: str
    sock: socket.socket | None = None
    up: bool = True
    vlan_aux: bool = True
    bufsize: int = 2048
    _filter_out: bool = field(default=False, repr=False)

    def open(self) -> None:
        sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        try:
            sock.bind((self.iface, ETH_P_ALL))
            ifindex = socket.if_nametoindex(self.iface)
            mreq = struct.pack("iHH8s", ifindex, PACKET_MR_PROMISC, 0, b"")
            sock.setsockopt(SOL_PACKET, PACKET_ADD_MEMBERSHIP, mreq)
            for force, opt in ((SO_RCVBUFFORCE, socket.SO_RCVBUF), (SO_SNDBUFFORCE, socket.SO_SNDBUF)):
                try:  # past net.core.rmem_max when we are root, as a burst absorber
                    sock.setsockopt(socket.SOL_SOCKET, force, SOCK_BUF)
                except OSError:
                    sock.setsockopt(socket.SOL_SOCKET, opt, SOCK_BUF)
            try:
                sock.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
            except OSError:
                self._filter_out = True
            if self.vlan_aux:
                sock.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
            sock.setblocking(False)
        except OSError:
            sock.close()
            raise
        self.sock = sock
        self.up = link_state(self.iface) == "up"
        self.bufsize = _frame_limit(self.iface)

    def fileno(self) -> int:
        return self.sock.fileno() if self.sock else -1

    def recv_batch(self, limit: int) -> list[bytes]:
        """Up to `limit` frames that are waiting, without blocking."""
        out: list[bytes] = []
        sock = self.sock
        if sock is None:
            return out
        append = out.append
        size = self.bufsize
        try:
            if self.vlan_aux:
                recvmsg = sock.recvmsg
                for _ in range(limit):
                    data, anc, _flags, addr = recvmsg(size, _AUX_SPACE)
                    if self._filter_out and addr[2] == PACKET_OUTGOING:
                        continue
                    if anc and anc[0][2][0] & TP_STATUS_VLAN_VALID:  # status is little-endian: bit 4 of byte 0
                        data = _restore_vlan(data, anc)
                    append(data)
            else:
                recvfrom = sock.recvfrom
                for _ in range(limit):
                    data, addr = recvfrom(size)
                    if self._filter_out and addr[2] == PACKET_OUTGOING:
                        continue
                    append(data)
        except BlockingIOError:
            pass
        except OSError as exc:
            if exc.errno in LINK_ERRNOS:
                if out:
                    return out
                raise PortGone(f"{self.iface}: {exc.strerror}") from exc
            raise
        return out

    def send(self, frame: bytes) -> bool:
        """Transmit one frame; False when the kernel refused it (buffer full, link down)."""
        try:
            self.sock.send(frame)
            return True
        except BlockingIOError:
            return False
        except OSError as exc:
            if exc.errno in LINK_ERRNOS or exc.errno == errno.EMSGSIZE:
                return False
            raise

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None


def _frame_limit(iface: str) -> int:
    """Receive buffer for one frame: the MTU plus Ethernet and VLAN headers (small buffers are faster)."""
    try:
        with open(f"/sys/class/net/{iface}/mtu") as f:
            mtu = int(f.read())
    except (OSError, ValueError):
        return MAX_FRAME
    return max(2048, min(MAX_FRAME, mtu + 64))


def _restore_vlan(data: bytes, anc: list) -> bytes:
    for level, kind, raw in anc:
        if level == SOL_PACKET and kind == PACKET_AUXDATA and len(raw) >= _AUX.size:
            status, _l, _s, _m, _n, tci, tpid = _AUX.unpack_from(raw)
            if status & TP_STATUS_VLAN_VALID or tci:
                if not status & TP_STATUS_VLAN_TPID_VALID:
                    tpid = 0x8100
                return data[:12] + struct.pack("!HH", tpid, tci) + data[12:]
    return data
