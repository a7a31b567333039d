"""Small helpers for emitting Python source."""
from __future__ import annotations

import keyword
import re


class Emitter:
    def __init__(self):
        self.lines: list[str] = []
        self.level = 0

    def __call__(self, line: str) -> None:
        self.lines.append("    " * self.level + line)

    def indent(self):
        self.level += 1

    def dedent(self):
        self.level -= 1

    def extend(self, other: Emitter) -> None:
        pad = "    " * self.level
        self.lines.extend(pad + x for x in other.lines)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


_SAFE = re.compile(r"[^A-Za-z0-9_]")


def pyident(name: str) -> str:
    s = _SAFE.sub("_", name)
    if not s or s[0].isdigit():
        s = "_" + s
    return s


def pyfield(name: str) -> str:
    if keyword.iskeyword(name) or name.startswith("_") or keyword.issoftkeyword(name):
        return "f_" + name
    return name
