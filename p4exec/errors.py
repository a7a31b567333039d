"""Located errors for everything p4exec finds wrong in P4 source."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SourceLoc:
    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


UNKNOWN_LOC = SourceLoc("<unknown>", 0, 0)


class P4Error(Exception):
    """An error in P4 source. ``str(err)`` is ``file:line:col: error: message``."""

    def __init__(self, message: str, loc: SourceLoc | None = None):
        self.message = message
        self.loc = loc or UNKNOWN_LOC
        super().__init__(str(self))

    def __str__(self) -> str:
        return f"{self.loc}: error: {self.message}"


class P4SyntaxError(P4Error):
    pass


class P4TypeError(P4Error):
    pass


class P4Unsupported(P4Error):
    def __init__(self, what: str, loc: SourceLoc | None = None):
        super().__init__(what if what.startswith("unsupported") else f"unsupported: {what}", loc)
