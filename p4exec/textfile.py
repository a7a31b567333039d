"""Reading a user's input file (a P4 program, an STF test, a topology, a spec, a trace) safely: only a regular
file, never more than a limit, UTF-8 or a clear error. `/dev/zero` would otherwise be read forever, a FIFO would
block the command, and a binary file would end in a UnicodeDecodeError traceback."""
from __future__ import annotations

import os
import stat

from p4exec.errors import P4Error, SourceLoc

DEFAULT_LIMIT = 64 << 20


class InputFileError(ValueError):
    """An input file that cannot be read as text; the message names the file and why."""


def read_user_text(path: str | os.PathLike[str], limit: int = DEFAULT_LIMIT, what: str = "file") -> str:
    """The UTF-8 text of the regular file `path` (at most `limit` bytes); InputFileError otherwise."""
    name = os.fspath(path)
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; the file is checked before reading.
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        raise InputFileError(f"cannot read {what} {name}: {err.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
            raise InputFileError(f"cannot read {what} {name}: {kind}")
        if st.st_size > limit:
            raise InputFileError(f"{what} {name} too large ({st.st_size} bytes; at most {limit})")
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(limit + 1)
    except OSError as err:
        raise InputFileError(f"cannot read {what} {name}: {err.strerror}") from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise InputFileError(f"{what} {name} too large (at most {limit} bytes)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise InputFileError(f"{what} {name} is not UTF-8 text (byte {err.start}: {data[err.start]:#04x}); "
                             "a binary file?") from None


def read_text_file(path: str, limit: int, what: str = "file") -> str:
    """`read_user_text` for the P4 tools: the error is a P4Error located at the file."""
    try:
        return read_user_text(path, limit, what)
    except InputFileError as err:
        raise P4Error(str(err), SourceLoc(path, 0, 0)) from None
