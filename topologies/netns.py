"""Do a few system calls inside a network namespace from this process, without starting a process there.

Configuring 512 hosts with `sysctl` and `ethtool` costs thousands of process starts; pinging from them, thousands
more. Linux lets one *thread* join a namespace (setns(2) acts on the calling thread only), and what it opens
there stays there: a socket made inside keeps belonging to that namespace after the thread returns, and
`/proc/sys/net` is the one of the thread that opens it. `entered()` joins for the duration of a `with` block and
always goes back, so the thread (often a pool's) is the same afterwards.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import socket
import struct
from collections.abc import Iterator
from contextlib import contextmanager

CLONE_NEWNET = 0x40000000
SIOCETHTOOL = 0x8946
ETHTOOL_STXCSUM = 0x17  # set TX checksum offload (the kernel also drops the offloads that depend on it)

_libc = ctypes.CDLL(None, use_errno=True)


def _setns(fd: int) -> None:
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"setns: {os.strerror(err)}")


@contextmanager
def entered(netns_path: str) -> Iterator[None]:
    """This thread in the network namespace at `netns_path` (/run/netns/NAME or /proc/PID/ns/net)."""
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
    try:
        target = os.open(netns_path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            _setns(target)
        finally:
            os.close(target)
        try:
            yield
        finally:
            try:
                _setns(home)
            except OSError as err:  # cannot happen for a namespace we came from; never leave a thread astray
                os.write(2, f"ethlab: cannot return a thread to its network namespace: {err}\n".encode())
                os._exit(70)
    finally:
        os.close(home)


def named(netns: str) -> str:
    return f"/run/netns/{netns}"


def write_sysctl(name: str, value: str) -> None:
    """`sysctl -w name=value` for the current thread's namespace (net.* keys)."""
    with open("/proc/sys/" + name.replace(".", "/"), "w") as f:
        f.write(value)


def tx_checksum_off(ifnames: list[str]) -> None:
    """`ethtool -K IF tx off` for interfaces of the current thread's namespace: a user-space switch forwards
    what it reads, so frames must leave the host with finished checksums."""
    value = ctypes.create_string_buffer(struct.pack("II", ETHTOOL_STXCSUM, 0))
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for ifname in ifnames:
            ifreq = struct.pack("16sP", ifname.encode(), ctypes.addressof(value))
            fcntl.ioctl(s.fileno(), SIOCETHTOOL, ifreq)
