"""Which parts of the reference toolchain (p4c-bm2-ss, BMv2) are on PATH; tests skip with this reason."""

from __future__ import annotations

import importlib.util
import shutil
from ctypes.util import find_library

COMPILER = "p4c-bm2-ss"
SWITCH = "simple_switch_grpc"
REQUIRED = (COMPILER, SWITCH)  # the runtime calls go over Thrift from this process: no simple_switch_CLI


def missing() -> list[str]:
    """Names of the commands and libraries the BMv2 side needs but cannot find."""
    absent = [tool for tool in REQUIRED if shutil.which(tool) is None]
    if find_library("nanomsg") is None:
        absent.append("libnanomsg (Debian: libnanomsg5)")
    if importlib.util.find_spec("thrift") is None:
        absent.append("the Python package thrift (pip install 'ethlab[bmv2]')")
    return absent


def skip_reason() -> str | None:
    """None when BMv2 differential tests can run, else why not (for pytest.skip)."""
    absent = missing()
    if not absent:
        return None
    return f"BMv2 reference toolchain not on PATH: {', '.join(absent)} missing"
