"""P4Runtime gRPC server (p4.v1.P4Runtime) over a device of `p4exec.device` and p4exec's runtime state."""

from __future__ import annotations

from p4exec.p4runtime.server import P4RuntimeServer

__all__ = ["P4RuntimeServer"]
