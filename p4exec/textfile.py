"""Reading a user's input file (a P4 program, an STF test) safely: only a regular file, never more than a
limit, UTF-8 or a clear error. `/dev/zero` would otherwise be read forever, a FIFO would block the command, and
a binary file would end in a UnicodeDecodeError traceback."""
from __future__ import annotations

import os
import stat

from p4exec.errors import P4Error, SourceLoc


def read_text_file(path: str, limit: int, what: str = "file") -> str:
    """The UTF-8 text of the regular file `path` (at most `limit` bytes); P4Error located at the file."""
    where = SourceLoc(path, 0, 0)
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; the file is checked before reading.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        raise P4Error(f"cannot read {what} {path}: {err.strerror}", where) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
            raise P4Error(f"cannot read {what} {path}: {kind}", where)
        if st.st_size > limit:
            raise P4Error(f"{what} too large ({st.st_size} bytes; at most {limit})", where)
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(limit + 1)
    except OSError as err:
        raise P4Error(f"cannot read {what} {path}: {err.strerror}", where) from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise P4Error(f"{what} too large (at most {limit} bytes)", where)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise P4Error(f"{what} is not UTF-8 text (byte {err.start}: {data[err.start]:#04x}); a binary file?",
                      where) from None
