"""P4Runtime gRPC server (p4.v1.P4Runtime) over p4exec's runtime state."""

from __future__ import annotations

from p4exec.p4runtime.device import Device
from p4exec.p4runtime.server import P4RuntimeServer

__all__ = ["Device", "P4RuntimeServer"]
