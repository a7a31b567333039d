"""The one seam between the switch process and the P4Runtime server package, and where it listens.

A standalone switch without TLS listens on a Unix socket only its user can reach (the default), or on TCP
loopback only when `--grpc-allow-local-users` says that every local user may then drive it; any other TCP
address needs TLS (docs/security.md).
"""

from __future__ import annotations

import ipaddress
import os
from typing import Any

from p4exec.privdir import ensure_private_dir

ALLOW_LOCAL_FLAG = "--grpc-allow-local-users"


def default_socket_dir() -> str:
    """/run/p4exec for root, else $XDG_RUNTIME_DIR/p4exec or /tmp/p4exec-UID: a directory only we can enter."""
    if os.geteuid() == 0:
        return "/run/p4exec"
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    return os.path.join(runtime, "p4exec") if runtime else f"/tmp/p4exec-{os.geteuid()}"


def default_address(device_id: int) -> str:
    return f"unix:{default_socket_dir()}/switch-{device_id}.sock"


def prepare_default(address: str) -> None:
    """Create the default socket directory (mode 0700, checked to be ours) before the server binds in it."""
    if address.startswith(f"unix:{default_socket_dir()}/"):
        ensure_private_dir(default_socket_dir())


def _is_loopback(host: str) -> bool:
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def transport_problem(address: str, tls: bool, allow_local_users: bool) -> str | None:
    """Why `address` may not be served as asked (None if it may)."""
    if address.startswith("unix:") or tls:
        return None
    host = address.rpartition(":")[0]
    if not _is_loopback(host):
        return (f"{address}: a TCP address other than loopback needs TLS (--grpc-cert/--grpc-key, and --grpc-ca "
                "to require client certificates)")
    if not allow_local_users:
        return (f"{address}: without TLS, a loopback port lets every local user drive this switch; say so with "
                f"{ALLOW_LOCAL_FLAG}, or use the default Unix socket (or unix:PATH), or TLS")
    return None


def start_p4runtime(device: Any, address: str, tls: Any = None) -> Any:
    """Start the P4Runtime server for `device` on `address` (TLS if `tls`, a server.TlsConfig); returns an
    object with `.stop(grace)`."""
    from p4exec.p4runtime import P4RuntimeServer

    prepare_default(address)
    server = P4RuntimeServer(device, address, tls=tls)
    server.start()
    return server
