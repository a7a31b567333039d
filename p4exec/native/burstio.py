"""A switch port's bursts in C, built through cffi like the native pipeline: frames out in one `sendmmsg` per burst
(the switch process queues a turn's frames per port and hands them over together), frames in taken from the
TPACKET_V2 receive ring in one call per burst. Without a C compiler the same bursts go frame by frame from Python
(p4exec/switch/ports.py; the semantics are the same, only slower)."""
from __future__ import annotations

import logging
from array import array
from itertools import accumulate
from typing import Any

from p4exec.native.build import BuildError, build

log = logging.getLogger("p4exec.switch")

CHUNK = 1024  # frames per call into C (a turn's burst is at most a few hundred)

CDEF = """
int burst_send(int fd, const char *buf, const uint32_t *lens, int n, int *failed, int *errs);
int ring_take(unsigned char *ring, uint32_t slot, uint32_t nslots, uint32_t *idx, int limit, int filter_out,
              unsigned char *out, size_t outcap, uint32_t *lens);
"""
TAKE_BYTES = 256 << 10  # a burst's frames copied out of the ring per call (at least one frame of any size)

SOURCE = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <linux/if_packet.h>

#define BURST_VEC 64

/* Send the n frames laid end to end in buf (lengths in lens) on fd, in order, with sendmmsg. A frame the kernel
   refuses is skipped and noted (its index in failed, its errno in errs), as a lone send would refuse it, and
   the frames after it still go. Returns the number refused. */
int burst_send(int fd, const char *buf, const uint32_t *lens, int n, int *failed, int *errs)
{
    struct mmsghdr msgs[BURST_VEC];
    struct iovec iov[BURST_VEC];
    size_t off = 0;
    int i = 0, nfail = 0;
    while (i < n) {
        int k = n - i < BURST_VEC ? n - i : BURST_VEC;
        size_t o = off;
        for (int j = 0; j < k; j++) {
            iov[j].iov_base = (void *)(buf + o);
            iov[j].iov_len = lens[i + j];
            memset(&msgs[j], 0, sizeof msgs[j]);
            msgs[j].msg_hdr.msg_iov = &iov[j];
            msgs[j].msg_hdr.msg_iovlen = 1;
            o += lens[i + j];
        }
        int r = sendmmsg(fd, msgs, (unsigned)k, MSG_DONTWAIT);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {            /* frame i refused: note it, go on with the next */
            failed[nfail] = i;
            errs[nfail] = r < 0 ? errno : 0;
            nfail++;
            off += lens[i];
            i++;
            continue;
        }
        for (int j = 0; j < r; j++)
            off += lens[i + j];
        i += r;
    }
    return nfail;
}

/* Take up to `limit` slots' frames from a TPACKET_V2 receive ring of nslots slots of `slot` bytes, from slot
   *idx on: each whole frame (its VLAN tag put back where the kernel took it out; with filter_out, not our own
   outgoing ones) copied to out, end to end, its length in lens; every slot taken goes back to the kernel.
   Stops early where the next frame would not fit in outcap. Returns the number of frames in out. */
int ring_take(unsigned char *ring, uint32_t slot, uint32_t nslots, uint32_t *idx, int limit, int filter_out,
              unsigned char *out, size_t outcap, uint32_t *lens)
{
    uint32_t i = *idx;
    size_t off = 0;
    int n = 0;
    for (int taken = 0; taken < limit; taken++) {
        unsigned char *h = ring + (size_t)i * slot;
        struct tpacket2_hdr *t = (struct tpacket2_hdr *)h;
        uint32_t status = __atomic_load_n(&t->tp_status, __ATOMIC_ACQUIRE);
        if (!(status & TP_STATUS_USER))
            break;
        uint32_t snap = t->tp_snaplen;
        int vlan = (status & TP_STATUS_VLAN_VALID) && snap >= 12;
        if (off + snap + 4 > outcap && n > 0)
            break;                      /* the next call takes it */
        const struct sockaddr_ll *ll = (const struct sockaddr_ll *)(h + TPACKET_ALIGN(sizeof(struct tpacket2_hdr)));
        if (!(filter_out && ll->sll_pkttype == PACKET_OUTGOING) && snap == t->tp_len && snap + 4 <= outcap) {
            const unsigned char *src = h + t->tp_mac;
            unsigned char *dst = out + off;
            if (vlan) {
                uint16_t tpid = (status & TP_STATUS_VLAN_TPID_VALID) ? t->tp_vlan_tpid : 0x8100;
                uint16_t tci = t->tp_vlan_tci;
                memcpy(dst, src, 12);
                dst[12] = tpid >> 8; dst[13] = tpid & 0xff; dst[14] = tci >> 8; dst[15] = tci & 0xff;
                memcpy(dst + 16, src + 12, snap - 12);
                lens[n] = snap + 4;
            } else {
                memcpy(dst, src, snap);
                lens[n] = snap;
            }
            off += lens[n];
            n++;
        }
        __atomic_store_n(&t->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
        i = i + 1 == nslots ? 0 : i + 1;
    }
    *idx = i;
    return n;
}
"""

_module: Any = None
_tried = False


def native() -> Any:
    """The built module (its `ffi` and `lib`), or None where no C compiler is (the Python path then)."""
    global _module, _tried
    if not _tried:
        _tried = True
        try:
            _module = build(SOURCE, CDEF)
        except BuildError as exc:
            log.info("burst sends frame by frame from Python: %s", exc)
            _module = None
    return _module


class BurstSender:
    """`send_burst` for one socket through C: reusable result arrays, one call per CHUNK frames."""

    __slots__ = ("lib", "ffi", "failed", "errs")

    def __init__(self, mod: Any) -> None:
        self.lib, self.ffi = mod.lib, mod.ffi
        self.failed = self.ffi.new("int[]", CHUNK)
        self.errs = self.ffi.new("int[]", CHUNK)

    def send(self, fd: int, frames: list[bytes]) -> list[tuple[int, int]]:
        """Send `frames` in order on `fd`; (index, errno) of each frame the kernel refused."""
        refused: list[tuple[int, int]] = []
        for base in range(0, len(frames), CHUNK):
            part = frames[base : base + CHUNK]
            lens = array("I", map(len, part))
            nfail = self.lib.burst_send(fd, b"".join(part), self.ffi.from_buffer("uint32_t[]", lens), len(part),
                                        self.failed, self.errs)
            for j in range(nfail):
                refused.append((base + self.failed[j], self.errs[j]))
        return refused


class RingReader:
    """One port's receive ring read through C: a burst's frames copied out in one call."""

    __slots__ = ("lib", "ffi", "ring", "slot", "nslots", "idx", "out", "lens", "filter_out", "keep")

    def __init__(self, mod: Any, mm: Any, slot: int, nslots: int, idx: int, filter_out: bool) -> None:
        self.lib, self.ffi = mod.lib, mod.ffi
        self.keep = mm  # the mapping stays alive while C points into it
        self.ring = self.ffi.from_buffer("unsigned char[]", mm, require_writable=True)
        self.slot, self.nslots, self.filter_out = slot, nslots, int(filter_out)
        self.idx = self.ffi.new("uint32_t *", idx)
        self.out = self.ffi.new("unsigned char[]", max(TAKE_BYTES, slot + 4))
        self.lens = self.ffi.new("uint32_t[]", 1024)

    def take(self, limit: int) -> list[bytes]:
        """Up to `limit` frames waiting in the ring (fewer where a burst outgrows the copy buffer)."""
        limit = min(limit, 1024)
        n = self.lib.ring_take(self.ring, self.slot, self.nslots, self.idx, limit, self.filter_out, self.out,
                               len(self.out), self.lens)
        if n == 0:
            return []
        lens = self.ffi.unpack(self.lens, n)
        ends = list(accumulate(lens))
        data = self.ffi.buffer(self.out, ends[-1])[:]
        return [data[end - ln : end] for ln, end in zip(lens, ends, strict=True)]

    def close(self) -> None:
        """Let go of the ring's mapping (it can be closed afterwards)."""
        self.ffi.release(self.ring)
        self.keep = None
