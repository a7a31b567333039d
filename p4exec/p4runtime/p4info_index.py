"""The server's view of the shared P4Info index: an unknown id is NOT_FOUND (spec)."""

from __future__ import annotations

from p4exec.p4info_index import KINDS, Field
from p4exec.p4info_index import P4InfoIndex as SharedIndex
from p4exec.p4runtime.errors import P4RuntimeError

SECTIONS = KINDS

__all__ = ["Field", "P4InfoIndex", "SECTIONS"]


class P4InfoIndex(SharedIndex):
    def unknown_error(self, message: str) -> Exception:
        return P4RuntimeError("NOT_FOUND", message)
