"""Switch ports on Linux interfaces through AF_PACKET raw sockets.

One socket per interface, bound to it, promiscuous, non-blocking, with large buffers.
Own transmitted frames are filtered in the kernel (PACKET_IGNORE_OUTGOING) where the
kernel has it, otherwise by the packet type recvfrom reports (PACKET_OUTGOING).
VLAN tags that the kernel stripped into auxdata are put back, so the program sees
the frame as it was on the wire (as BMv2 via libpcap does).
"""

from __future__ import annotations

import errno
import mmap
import os
import socket
import struct
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from p4exec.native.burstio import BurstSender, RingReader

ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_ADD_MEMBERSHIP = 1
PACKET_MR_PROMISC = 1
PACKET_AUXDATA = 8
PACKET_IGNORE_OUTGOING = 23
PACKET_OUTGOING = 4
PACKET_STATISTICS = 6
_TP_STATS = struct.Struct("II")  # struct tpacket_stats: tp_packets, tp_drops
TP_STATUS_VLAN_VALID = 1 << 4
TP_STATUS_VLAN_TPID_VALID = 1 << 6
SOCK_BUF = 8 << 20
SO_SNDBUFFORCE = 32
SO_RCVBUFFORCE = 33
MAX_FRAME = 65536

PACKET_RX_RING = 5
PACKET_VERSION = 10
TPACKET_V2 = 1
TP_STATUS_USER = 1
RING_BYTES = 8 << 20  # default per port: 4k standard frames of burst absorption (counts in RSS)
RING_MIN = 1 << 20
RING_BLOCK = 1 << 16
# struct tpacket2_hdr: status, len, snaplen, mac, net, sec, nsec, vlan_tci, vlan_tpid
_T2 = struct.Struct("IIIHHIIHH")
_T2_SLL_PKTTYPE = 32 + 10  # sockaddr_ll follows the aligned header; sll_pkttype is at +10
_ZERO4 = bytes(4)

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
class SocketPort:
    """One switch port: number, interface and its socket."""

    num: int
    iface: str
    sock: socket.socket | None = None
    up: bool = True
    vlan_aux: bool = True
    ifindex: int = 0
    ring_bytes: int = RING_BYTES  # 0: no ring, recvmsg from the socket buffer instead
    bufsize: int = 2048
    send_errors: dict[int, int] = field(default_factory=dict)  # errno -> frames the kernel refused
    _filter_out: bool = field(default=False, repr=False)
    _mm: mmap.mmap | None = field(default=None, repr=False)
    _slot: int = field(default=2048, repr=False)
    _nslots: int = field(default=0, repr=False)
    _idx: int = field(default=0, repr=False)
    _reader: RingReader | None = field(default=None, repr=False)  # C's reader of the ring
    _py_ring: bool = field(default=False, repr=False)  # no C reader here: Python reads the ring

    def open(self) -> None:
        # Protocol 0: the socket takes no frame until bind() names the interface and ETH_P_ALL. Opened with
        # ETH_P_ALL it would take every interface's frames until then, and bind() would first have to unhook
        # it, waiting for an RCU grace period (~12 ms a port, 0.7 s of a 64-port switch's start).
        sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
        self.bufsize = _frame_limit(self.iface)
        try:
            if self.ring_bytes > 0:
                self._setup_ring(sock)
            sock.bind((self.iface, ETH_P_ALL))
            self.ifindex = socket.if_nametoindex(self.iface)
            mreq = struct.pack("iHH8s", self.ifindex, PACKET_MR_PROMISC, 0, b"")
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
            if self.vlan_aux and self._mm is None:
                sock.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
            sock.setblocking(False)
        except OSError:
            self._drop_ring()
            sock.close()
            raise
        self.sock = sock
        self.up = link_state(self.iface) == "up"

    def _setup_ring(self, sock: socket.socket) -> None:
        """A TPACKET_V2 receive ring: frames are read from shared memory, no system call per frame."""
        slot = 2048
        while slot < self.bufsize + 128:
            slot *= 2
        nslots = max(RING_BLOCK // slot, max(self.ring_bytes, RING_MIN) // slot)
        block = max(RING_BLOCK, slot)
        try:
            sock.setsockopt(SOL_PACKET, PACKET_VERSION, TPACKET_V2)
            req = struct.pack("IIII", block, nslots * slot // block, slot, nslots)
            sock.setsockopt(SOL_PACKET, PACKET_RX_RING, req)
            self._mm = mmap.mmap(sock.fileno(), nslots * slot, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        except OSError:
            self._mm = None  # older kernel or no memory: plain recvmsg
            return
        self._slot, self._nslots, self._idx = slot, nslots, 0

    def _drop_ring(self) -> None:
        if self._reader is not None:
            self._reader.close()  # C's view of the mapping ends first: an mmap with a view cannot close
            self._reader = None
        if self._mm is not None:
            self._mm.close()
            self._mm = None

    def take_error(self) -> int:
        """Read and clear the socket's pending error (what made epoll report EPOLLERR)."""
        if self.sock is None:
            return 0
        return self.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)

    def fileno(self) -> int:
        return self.sock.fileno() if self.sock else -1

    def recv_batch(self, limit: int) -> list[bytes]:
        """Up to `limit` frames that are waiting, without blocking."""
        out: list[bytes] = []
        sock = self.sock
        if sock is None:
            return out
        if self._mm is not None:
            return self._recv_ring(limit)
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

    def _recv_ring(self, limit: int) -> list[bytes]:
        reader = self._reader
        if reader is None and self._mm is not None and not self._py_ring:
            reader = self._reader = ring_reader(self._mm, self._slot, self._nslots, self._idx, self._filter_out)
            self._py_ring = reader is None
        if reader is not None:  # C takes the burst in one call
            return reader.take(limit)
        return self._recv_ring_py(limit)

    def _recv_ring_py(self, limit: int) -> list[bytes]:
        """The ring read frame by frame in Python (no C compiler)."""
        out: list[bytes] = []
        append = out.append
        mm = self._mm
        if mm is None:
            return out
        slot, nslots, idx = self._slot, self._nslots, self._idx
        unpack = _T2.unpack_from
        filt = self._filter_out
        for _ in range(limit):
            off = idx * slot
            status, length, snap, mac, _net, _s, _ns, tci, tpid = unpack(mm, off)
            if not status & TP_STATUS_USER:
                break
            if not (filt and mm[off + _T2_SLL_PKTTYPE] == PACKET_OUTGOING) and snap == length:
                data = mm[off + mac : off + mac + snap]
                if status & TP_STATUS_VLAN_VALID:
                    if not status & TP_STATUS_VLAN_TPID_VALID:
                        tpid = 0x8100
                    data = data[:12] + struct.pack("!HH", tpid, tci) + data[12:]
                append(data)
            mm[off : off + 4] = _ZERO4  # hand the slot back to the kernel
            idx += 1
            if idx == nslots:
                idx = 0
        self._idx = idx
        return out

    def send(self, frame: bytes) -> bool:
        """Transmit one frame; False when the kernel refused it.

        Any refusal (queue full = ENOBUFS, link down, frame too big, ...) costs this frame only: it is counted
        as a tx error by the caller and the switch goes on. A surprising errno is remembered in
        `send_errors` so the switch's stats show it, rather than ending the process."""
        sock = self.sock
        if sock is None:
            return False
        try:
            sock.send(frame)
            return True
        except BlockingIOError:
            return False
        except OSError as exc:
            code = exc.errno or 0
            self.send_errors[code] = self.send_errors.get(code, 0) + 1
            return False

    def send_burst(self, frames: list[bytes]) -> list[int]:
        """Transmit `frames` in order, one system call per burst where C is at hand (p4exec/native/burstio.py);
        the indexes of the frames the kernel refused, each refused and remembered as `send` would."""
        sock = self.sock
        burst = burst_sender() if sock is not None else None
        if burst is None or sock is None:  # no C compiler (or no socket): frame by frame, the same outcome
            send = self.send
            return [i for i, frame in enumerate(frames) if not send(frame)]
        refused = burst.send(sock.fileno(), frames)
        for _i, code in refused:
            if code not in (errno.EAGAIN, errno.EWOULDBLOCK):  # a full queue is not an error worth naming
                self.send_errors[code] = self.send_errors.get(code, 0) + 1
        return [i for i, _code in refused]

    def take_drops(self) -> int:
        """Frames the kernel dropped for this socket (ring or buffer full) since the last call."""
        if self.sock is None:
            return 0
        try:
            raw = self.sock.getsockopt(SOL_PACKET, PACKET_STATISTICS, _TP_STATS.size)
        except OSError:
            return 0
        return _TP_STATS.unpack(raw)[1]  # reading resets the kernel's counters

    def close(self) -> None:
        self._drop_ring()
        if self.sock is not None:
            self.sock.close()
            self.sock = None


_BURST: list[BurstSender | None] = []  # filled once: the C burst sender, or None (frame by frame)


def burst_sender() -> BurstSender | None:
    """The C burst sender, built (or loaded from the cache) once, before the loop starts (the switch asks when
    it opens its ports); None where no C compiler is. Imported late: the Python path needs no cffi."""
    if not _BURST:
        from p4exec.native.burstio import BurstSender, native

        mod = native()
        _BURST.append(BurstSender(mod) if mod is not None else None)
    return _BURST[0]


def ring_reader(mm: mmap.mmap, slot: int, nslots: int, idx: int, filter_out: bool) -> RingReader | None:
    """C's reader of one receive ring from slot `idx` on, or None where no C compiler is."""
    if burst_sender() is None:
        return None
    from p4exec.native.burstio import RingReader, native

    return RingReader(native(), mm, slot, nslots, idx, filter_out)


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
