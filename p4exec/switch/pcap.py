"""Minimal libpcap writer: one file per port and direction, as `--pcap DIR` promises.

Written by hand (classic pcap, microsecond stamps, Ethernet link type) because the
switch only ever appends whole frames and scapy's writer costs more per packet.
"""

from __future__ import annotations

import logging
import struct
import time
from pathlib import Path

_GLOBAL = struct.Struct("<IHHiIII")
_RECORD = struct.Struct("<IIII")
PCAP_MAGIC = 0xA1B2C3D4
LINKTYPE_ETHERNET = 1
SNAPLEN = 65535

log = logging.getLogger("p4exec.pcap")


class PcapWriter:
    """Appends frames to a classic pcap file; `flush()` makes them visible to readers."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._f = open(self.path, "wb", buffering=1 << 16)  # noqa: SIM115 - closed by close()
        self._f.write(_GLOBAL.pack(PCAP_MAGIC, 2, 4, 0, 0, SNAPLEN, LINKTYPE_ETHERNET))
        self.count = 0
        self.failed: str | None = None  # why writing stopped (disk full, ...): capture stops, forwarding not

    def write(self, frame: bytes, ts: float | None = None) -> None:
        if self.failed is not None:
            return
        if ts is None:
            ts = time.time()
        sec = int(ts)
        usec = int((ts - sec) * 1_000_000)
        n = len(frame)
        cap = min(n, SNAPLEN)
        try:
            self._f.write(_RECORD.pack(sec, usec, cap, n))
            self._f.write(frame[:cap])
        except OSError as exc:
            self._fail(exc)
            return
        self.count += 1

    def flush(self) -> None:
        if self.failed is None:
            try:
                self._f.flush()
            except OSError as exc:
                self._fail(exc)

    def _fail(self, exc: OSError) -> None:
        self.failed = f"{self.path}: {exc.strerror or exc}"
        log.error("pcap capture stopped after %d frames: %s", self.count, self.failed)

    def close(self) -> None:
        if not self._f.closed:
            try:
                self._f.close()
            except OSError as exc:
                self._fail(exc)


def read_pcap(path: str | Path) -> list[bytes]:
    """Frames of a classic pcap file (used by tests and tools to check what was written)."""
    data = Path(path).read_bytes()
    magic = struct.unpack_from("<I", data, 0)[0]
    if magic != PCAP_MAGIC:
        raise ValueError(f"{path}: not a little-endian microsecond pcap file")
    frames = []
    off = _GLOBAL.size
    while off + _RECORD.size <= len(data):
        _, _, cap, _ = _RECORD.unpack_from(data, off)
        off += _RECORD.size
        frames.append(data[off : off + cap])
        off += cap
    return frames
