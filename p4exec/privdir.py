"""Directories only the current user can write, created safely on a machine shared with other users.

A path under /tmp that another user can guess is a path that user can create first: as a directory they own,
or as a symlink to a file of ours.  Everything ethlab and p4exec write (run directories, caches that are
loaded back, batch files that are executed) therefore lives in a directory made here: created with mode 0700
or checked to be ours, not a symlink, and not writable by group or others.
"""
from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


class UnsafeDirectory(RuntimeError):
    """A directory we were asked to use belongs to someone else, is a symlink, or is open to others."""


def ensure_private_dir(path: str | os.PathLike[str], mode: int = 0o700) -> Path:
    """Create ``path`` (mode 0700) or check an existing one is a real directory we own that nobody else may
    write; raise UnsafeDirectory otherwise.  Missing parents are created the same way."""
    p = Path(path)
    if not p.parent.exists() and p.parent != p:
        ensure_private_dir(p.parent, mode)
    try:
        os.mkdir(p, mode)
    except FileExistsError:
        pass
    st = os.lstat(p)
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise UnsafeDirectory(f"{p} is not a directory (a symlink or a file is in its place)")
    if st.st_uid != os.geteuid():
        raise UnsafeDirectory(f"{p} belongs to uid {st.st_uid}, not to us (uid {os.geteuid()})")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise UnsafeDirectory(f"{p} is writable by other users (mode {stat.S_IMODE(st.st_mode):o})")
    return p


def fresh_dir(parent: str | os.PathLike[str], prefix: str) -> Path:
    """A new directory (mode 0700, unpredictable name) under the private directory ``parent``."""
    ensure_private_dir(parent)
    return Path(tempfile.mkdtemp(prefix=prefix, dir=parent))


def open_new(path: str | os.PathLike[str], mode: int = 0o600, text: bool = True, append: bool = False):
    """Open ``path`` for writing without following a symlink at its place (O_NOFOLLOW).  With ``append`` the
    file may exist; otherwise it is truncated."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | (os.O_APPEND if append else os.O_TRUNC)
    fd = os.open(path, flags, mode)
    return os.fdopen(fd, "a" if append else "w") if text else os.fdopen(fd, "ab" if append else "wb")


def user_cache_dir(name: str) -> Path | None:
    """``~/.cache/<name>`` made private, or None when the home directory is not ours to write."""
    try:
        home = Path(os.path.expanduser("~"))
        if not home.is_dir() or os.lstat(home).st_uid != os.geteuid():
            return None
        return ensure_private_dir(home / ".cache" / name)
    except (OSError, UnsafeDirectory):
        return None
