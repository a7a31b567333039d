"""P4Runtime gRPC server (p4.v1.P4Runtime) over p4sim's runtime state."""

from __future__ import annotations

from p4sim.p4runtime.device import Device
from p4sim.p4runtime.server import P4RuntimeServer

__all__ = ["Device", "P4RuntimeServer"]
