"""Static ARP entries by the thousand, straight over rtnetlink.

Every host of a 512-GPU, 4-plane fabric gets a permanent neighbour entry for each peer on each plane:
about a million entries. `ip -batch` sends each as one request and waits for its answer (two system calls
and a context switch per entry, plus parsing a text line). Here the requests are built once per plane and
interface index as one byte string, a host's own entry is cut out by slicing, and they go to the kernel in
chunks of a few hundred per `send`, each acknowledged; the first refusal is reported with its errno.
The socket is opened inside the host's namespace (topologies.netns), so the entries land there.
"""

from __future__ import annotations

import os
import socket
import struct

RTM_NEWNEIGH = 28
NLMSG_ERROR = 2
NLM_F_REQUEST, NLM_F_ACK, NLM_F_REPLACE, NLM_F_CREATE = 0x1, 0x4, 0x100, 0x400
NUD_PERMANENT = 0x80
NDA_DST, NDA_LLADDR = 1, 2
_NLMSG = struct.Struct("=IHHII")
_NDMSG = struct.Struct("=BBHiHBB")
_RTA = struct.Struct("=HH")
_ERR = struct.Struct("=i")
CHUNK = 256  # requests per send: their acknowledgements fit any receive buffer


def _rta(kind: int, data: bytes) -> bytes:
    body = _RTA.pack(_RTA.size + len(data), kind) + data
    return body + b"\0" * (-len(body) % 4)


def neigh_request(ifindex: int, ipv4: str, mac: str, seq: int = 0) -> bytes:
    """RTM_NEWNEIGH for `ip neigh replace IPV4 lladdr MAC dev IFINDEX nud permanent`."""
    payload = (_NDMSG.pack(socket.AF_INET, 0, 0, ifindex, NUD_PERMANENT, 0, 0)
               + _rta(NDA_DST, socket.inet_aton(ipv4)) + _rta(NDA_LLADDR, bytes.fromhex(mac.replace(":", ""))))
    flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_REPLACE
    return _NLMSG.pack(_NLMSG.size + len(payload), RTM_NEWNEIGH, flags, seq, 0) + payload


class NeighbourBlocks:
    """The requests of one plane's entries for one interface index, built once and shared by every host
    whose interface on that plane has that index (in fresh namespaces they usually all do)."""

    def __init__(self, entries: dict[int, list[tuple[str, str]]]) -> None:
        self.entries = entries  # plane -> [(ipv4, mac)]
        self._blocks: dict[tuple[int, int], tuple[bytes, dict[str, int], int]] = {}

    def requests(self, plane: int, ifindex: int, own_ip: str) -> list[bytes]:
        """The requests for `plane` on `ifindex`, without the host's own address, as chunks."""
        key = (plane, ifindex)
        if key not in self._blocks:
            msgs = [neigh_request(ifindex, ip, mac) for ip, mac in self.entries[plane]]
            size = len(msgs[0]) if msgs else 0
            self._blocks[key] = (b"".join(msgs), {ip: i for i, (ip, _m) in enumerate(self.entries[plane])}, size)
        blob, index, size = self._blocks[key]
        own = index.get(own_ip)
        if own is not None:
            blob = blob[:own * size] + blob[(own + 1) * size:]
        step = CHUNK * size
        return [blob[i:i + step] for i in range(0, len(blob), step)] if size else []


def install(chunks: list[bytes]) -> int:
    """Send the requests (in the current thread's network namespace); returns how many the kernel took.
    Raises OSError with the kernel's errno at the first refusal."""
    done = 0
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE) as nl:
        nl.bind((0, 0))
        for chunk in chunks:
            expected = _count(chunk)
            nl.sendall(chunk)
            while expected:
                data = nl.recv(1 << 16)
                off = 0
                while off + _NLMSG.size <= len(data):
                    length, kind, _flags, _seq, _pid = _NLMSG.unpack_from(data, off)
                    if length < _NLMSG.size:
                        break
                    if kind == NLMSG_ERROR:
                        (err,) = _ERR.unpack_from(data, off + _NLMSG.size)
                        if err:
                            raise OSError(-err, f"adding a neighbour entry: {os.strerror(-err)}")
                        expected -= 1
                        done += 1
                    off += (length + 3) & ~3
    return done


def _count(chunk: bytes) -> int:
    n, off = 0, 0
    while off + _NLMSG.size <= len(chunk):
        (length,) = struct.unpack_from("=I", chunk, off)
        off += (length + 3) & ~3
        n += 1
    return n
