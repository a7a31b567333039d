"""Result directories that are ours: where `ethlab run --out` and `ethlab traffic run --out` write.

ethlab runs as root. A results directory another user can write, or a symlink in its place, would let that
user make root overwrite any file (a planted `DIR/command.json -> /etc/...`). And a directory holding an
earlier (say interrupted) run's files would mix them into the new report. So an output directory is used only
if it is new or empty, a real directory (not a symlink) owned by us, and writable by nobody else; missing
parents are created (mode 0755) only when the nearest existing one passes the same ownership check. Each
refusal says which rule and what to do.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path


class OutDirError(ValueError):
    """An output directory that is not ours, not empty, or not a directory."""


def claim_out_dir(path: str | os.PathLike[str]) -> Path:
    """Create `path` (mode 0755) or accept an existing empty one that is ours; OutDirError otherwise."""
    p = Path(path)
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        _check_parent(p)
        p.mkdir(parents=True, mode=0o755)
        return _check(p)
    if stat.S_ISLNK(st.st_mode):
        raise OutDirError(f"--out {p}: is a symlink; give the real directory")
    _check(p)
    if any(os.scandir(p)):
        raise OutDirError(f"--out {p}: is not empty (an earlier run's results?); nothing was written: "
                          "give a new directory, or remove this one first")
    return p


def _check(p: Path) -> Path:
    st = os.lstat(p)
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise OutDirError(f"--out {p}: is not a directory")
    if st.st_uid != os.geteuid():
        raise OutDirError(f"--out {p}: belongs to uid {st.st_uid}, not to us: results go only into our own "
                          "directories")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise OutDirError(f"--out {p}: other users may write into it (mode {stat.S_IMODE(st.st_mode):o})")
    return p


def _check_parent(p: Path) -> None:
    """The nearest existing ancestor must be a directory; if it is not ours, it must be sticky (like /tmp),
    so nobody can swap what we create there."""
    parent = p.absolute().parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    st = os.stat(parent)
    if not stat.S_ISDIR(st.st_mode):
        raise OutDirError(f"--out {p}: {parent} is not a directory")
    if st.st_uid != os.geteuid() and st.st_mode & stat.S_IWOTH and not st.st_mode & stat.S_ISVTX:
        raise OutDirError(f"--out {p}: {parent} may be changed by other users")


def open_result(path: str | os.PathLike[str], text: bool = True):
    """A result file opened for writing without following a symlink at its place."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    return os.fdopen(fd, "w" if text else "wb")
