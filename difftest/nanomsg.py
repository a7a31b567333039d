"""BMv2's packet-in/packet-out channel: a nanomsg PAIR socket (``simple_switch --packet-in ADDR``).

Packets travel as messages ``type, port, length`` (three native 32-bit ints, packed) followed by the frame.
Unlike veths this carries frames of any length (STF test packets are often shorter than an Ethernet
header), needs no namespace, and keeps the port number exact. libnanomsg is loaded with ctypes.
"""

from __future__ import annotations

import ctypes
import struct
import time
from ctypes.util import find_library

AF_SP = 1
NN_PAIR = 16
NN_SOL_SOCKET = 0
NN_LINGER = 1
NN_RCVTIMEO = 5
NN_SNDTIMEO = 4
MSG_PACKET_IN = 3   # to the switch
MSG_PACKET_OUT = 4  # from the switch
_HEADER = struct.Struct("=iii")
_MAX_FRAME = 1 << 16


class NanomsgError(OSError):
    """libnanomsg missing or a socket call failed."""


def _lib() -> ctypes.CDLL:
    name = find_library("nanomsg")
    if name is None:
        raise NanomsgError("libnanomsg not found (Debian: apt-get install libnanomsg5)")
    lib = ctypes.CDLL(name, use_errno=True)
    lib.nn_strerror.restype = ctypes.c_char_p
    lib.nn_send.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    lib.nn_recv.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    return lib


class PacketChannel:
    """The test side of a switch's ``--packet-in`` socket: send frames to ports, receive what leaves."""

    def __init__(self, address: str, timeout_ms: int = 1) -> None:
        self._nn = _lib()
        self._sock = self._nn.nn_socket(AF_SP, NN_PAIR)
        if self._sock < 0:
            raise self._error("nn_socket")
        for opt, value in ((NN_RCVTIMEO, timeout_ms), (NN_SNDTIMEO, 5000), (NN_LINGER, 0)):
            val = ctypes.c_int(value)
            self._nn.nn_setsockopt(self._sock, NN_SOL_SOCKET, opt, ctypes.byref(val), ctypes.sizeof(val))
        if self._nn.nn_connect(self._sock, address.encode()) < 0:
            raise self._error(f"nn_connect {address}")
        self._buf = ctypes.create_string_buffer(_MAX_FRAME + _HEADER.size)

    def _error(self, what: str) -> NanomsgError:
        err = self._nn.nn_errno()
        return NanomsgError(err, f"{what}: {self._nn.nn_strerror(err).decode()}")

    def send(self, port: int, frame: bytes) -> None:
        msg = _HEADER.pack(MSG_PACKET_IN, port, len(frame)) + frame
        if self._nn.nn_send(self._sock, msg, len(msg), 0) < 0:
            raise self._error("nn_send")

    def receive(self) -> tuple[int, bytes] | None:
        """One packet the switch sent out, or None after the receive timeout."""
        while True:
            n = self._nn.nn_recv(self._sock, self._buf, len(self._buf), 0)
            if n < 0:
                return None
            kind, port, length = _HEADER.unpack_from(self._buf.raw, 0)
            if kind == MSG_PACKET_OUT:
                return port, self._buf.raw[_HEADER.size:_HEADER.size + min(length, n - _HEADER.size)]

    def drain(self, quiet_s: float = 0.15, max_s: float = 10.0) -> list[tuple[int, bytes]]:
        """Every packet until none came for ``quiet_s`` (bounded by ``max_s``)."""
        out: list[tuple[int, bytes]] = []
        start = last = time.monotonic()
        while True:
            now = time.monotonic()
            if now - last >= quiet_s or now - start >= max_s:
                return out
            got = self.receive()
            if got is not None:
                out.append(got)
                last = time.monotonic()

    def collect(self, expected: int, settle_s: float = 0.03, max_wait_s: float = 5.0) -> list[tuple[int, bytes]]:
        """Wait (bounded) for `expected` packets, then for `settle_s` of quiet to catch any extra: fast when
        the caller knows how many to expect, still right when it does not."""
        out: list[tuple[int, bytes]] = []
        deadline = time.monotonic() + max_wait_s
        while len(out) < expected and time.monotonic() < deadline:
            got = self.receive()
            if got is not None:
                out.append(got)
        return out + self.drain(settle_s, max_wait_s)

    def close(self) -> None:
        if self._sock >= 0:
            self._nn.nn_close(self._sock)
            self._sock = -1
