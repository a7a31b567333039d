"""A port's frames out in one system call per burst: `sendmmsg` from C, built through cffi like the native
pipeline. The switch process queues a turn's frames per port and hands them over together; without a C
compiler the same bursts go out frame by frame from Python (the semantics are the same, only slower)."""
from __future__ import annotations

import logging
from array import array
from typing import Any

from p4exec.native.build import BuildError, build

log = logging.getLogger("p4exec.switch")

CHUNK = 1024  # frames per call into C (a turn's burst is at most a few hundred)

CDEF = """
int burst_send(int fd, const char *buf, const uint32_t *lens, int n, int *failed, int *errs);
"""

SOURCE = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

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
