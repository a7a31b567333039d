"""argparse types that check ranges: a bad number is a one-line usage error, never a traceback or a value
that is silently clamped, wrapped or ignored (nan, inf, a negative rate, port 99999, device id 2**64)."""
from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable

U64 = (1 << 64) - 1
PORT_MAX = 511  # v1model's port numbers are bit<9>
IFNAME_MAX = 15  # Linux IFNAMSIZ - 1


def number(kind: Callable[[str], float], low: float, high: float, what: str) -> Callable[[str], float]:
    """A finite `kind` (int or float) in [low, high]."""
    def convert(text: str) -> float:
        try:
            value = kind(text)
        except (ValueError, OverflowError):
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if not math.isfinite(value) or not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text!r}: must be {what} in [{_show(low)}, {_show(high)}]")
        return value

    convert.__name__ = what
    return convert


def _show(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def integer(low: int, high: int) -> Callable[[str], float]:
    return number(int, low, high, "an integer")


def real(low: float, high: float) -> Callable[[str], float]:
    return number(float, low, high, "a number")


def tcp_or_unix_address(text: str) -> str:
    """`HOST:PORT` with a port in 0..65535, or `unix:PATH` whose directory exists."""
    if text.startswith("unix:"):
        path = text[len("unix://"):] if text.startswith("unix://") else text[len("unix:"):]
        if not path:
            raise argparse.ArgumentTypeError(f"{text!r}: no socket path")
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent):
            raise argparse.ArgumentTypeError(f"{text!r}: directory {parent} does not exist")
        return text
    host, sep, port = text.rpartition(":")
    if not sep or not host:
        raise argparse.ArgumentTypeError(f"{text!r}: want HOST:PORT or unix:PATH")
    try:
        value = int(port)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: port {port!r} is not a number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r}: port {value} is outside 0..65535")
    return text


def new_file(text: str) -> str:
    """A file to write: its directory must exist (nothing is created on the user's behalf)."""
    parent = os.path.dirname(os.path.abspath(text)) or "."
    if not os.path.isdir(parent):
        raise argparse.ArgumentTypeError(f"{text!r}: directory {parent} does not exist")
    if os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text!r} is a directory")
    return text
