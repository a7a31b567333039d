"""The controller's P4Info index: the one shared with the P4Runtime server (p4exec/p4info_index.py).

A full name (`MyIngress.ipv4_lpm`) always works; a short one (`ipv4_lpm`) works when exactly one object of that
kind ends with it, as in p4runtime-shell. Lookups fail with a message that lists what does exist.
"""

from __future__ import annotations

from pathlib import Path

from google.protobuf import text_format
from p4.config.v1 import p4info_pb2

from p4exec.p4info_index import KINDS, Field, P4InfoIndex, UnknownP4InfoObject

__all__ = ["KINDS", "Field", "P4InfoIndex", "UnknownP4InfoObject", "load_p4info"]


def load_p4info(path: str | Path) -> p4info_pb2.P4Info:
    """Read a P4Info in text format (`.txtpb`/`.txt`) or binary (`.bin`)."""
    data = Path(path).read_bytes()
    info = p4info_pb2.P4Info()
    if Path(path).suffix == ".bin":
        info.ParseFromString(data)
    else:
        text_format.Parse(data.decode(), info)
    return info
