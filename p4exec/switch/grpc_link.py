"""The one seam between the switch process and the P4Runtime server package."""

from __future__ import annotations

from typing import Any


def start_p4runtime(device: Any, address: str, tls: Any = None) -> Any:
    """Start the P4Runtime server for `device` on `address` (TLS if `tls`, a server.TlsConfig); returns an
    object with `.stop(grace)`."""
    from p4exec.p4runtime import P4RuntimeServer

    server = P4RuntimeServer(device, address, tls=tls)
    server.start()
    return server
