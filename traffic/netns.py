"""Open AF_PACKET sockets inside other network namespaces from one process.

A socket stays in the namespace it was created in, so the engine enters a host's namespace with setns(2),
opens and binds the socket there and returns to its own namespace. One process can thus drive hundreds of
endpoints. Namespaces are named like `ip netns` does (`/var/run/netns/NAME`), or given as a path
(`/proc/PID/ns/net`, what Mininet hosts have), or as `pid:PID`.
"""

from __future__ import annotations

import ctypes
import os
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

CLONE_NEWNET = 0x40000000
ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_STATISTICS = 6
PACKET_IGNORE_OUTGOING = 23
PACKET_OUTGOING = 4
SO_SNDBUFFORCE = 32
SO_RCVBUFFORCE = 33

_libc = ctypes.CDLL(None, use_errno=True)


def netns_path(netns: str) -> str:
    """Resolve a namespace reference to a path setns can open."""
    if netns.startswith("pid:"):
        return f"/proc/{int(netns[4:])}/ns/net"
    if netns.startswith("/"):
        return netns
    return f"/var/run/netns/{netns}"


def _setns(fd: int) -> None:
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"setns: {os.strerror(err)}")


@contextmanager
def in_netns(netns: str | None) -> Iterator[None]:
    """Run the body with this thread inside `netns` (None: stay where we are); always switch back."""
    if netns is None:
        yield
        return
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open(netns_path(netns), os.O_RDONLY)
    try:
        _setns(target)
        try:
            yield
        finally:
            _setns(home)
    finally:
        os.close(target)
        os.close(home)


def open_packet_socket(netns: str | None, ifname: str, rcvbuf: int = 8 << 20,
                       sndbuf: int = 4 << 20) -> socket.socket:
    """A non-blocking raw socket bound to `ifname` in `netns`, seeing every EtherType, not its own sends."""
    with in_netns(netns):
        sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        try:
            sock.bind((ifname, ETH_P_ALL))
            for opt, size in ((SO_RCVBUFFORCE, rcvbuf), (SO_SNDBUFFORCE, sndbuf)):
                try:
                    sock.setsockopt(socket.SOL_SOCKET, opt, size)
                except PermissionError:
                    pass
            try:
                sock.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
            except OSError:
                pass  # old kernel: the receiver also filters outgoing frames by packet type
            sock.setblocking(False)
        except BaseException:
            sock.close()
            raise
    return sock


def socket_drops(sock: socket.socket) -> int:
    """Frames the kernel dropped because this socket's buffer was full (reading resets the counter)."""
    raw = sock.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8)
    return int.from_bytes(raw[4:8], "little")


def sh(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Run a command (ip, tc) without a shell; raise with its stderr on failure."""
    proc = subprocess.run(list(args), capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: {proc.stderr.strip()}")
    return proc
