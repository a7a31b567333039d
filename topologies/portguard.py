"""Keep TCP ports of a run for root on this machine only (nftables), because BMv2 cannot.

simple_switch_grpc's Thrift server binds every address (0.0.0.0) with no authentication, and its gRPC server
listens on TCP: any host on the network could rewrite tables over Thrift, and any local user could over either.
BMv2 has no option to bind Thrift elsewhere, so each run that starts BMv2 gets its own nftables table
(``inet ethlab_<run-id>``) before the switches start:

* input: a packet for one of those ports that did not come in on loopback is dropped (other hosts, and the
  fabric's own namespaces, cannot reach them);
* output: a connection to one of those ports over loopback from a process whose user is not root is reset.

The table is recorded in the run state and deleted by cleanup with the rest of the run.
"""
from __future__ import annotations

import os
import shutil
import subprocess


class PortGuardError(RuntimeError):
    """nftables is missing or refused the rules: the ports would be open to everyone, so nothing starts."""


def table_name(run_id: str) -> str:
    return f"ethlab_{run_id}"


def rules(table: str, ports: list[int]) -> str:
    """The nft script for ``table`` (replacing an older table of that name)."""
    plist = ", ".join(str(p) for p in sorted(set(ports)))
    return (f"table inet {table}\n"
            f"delete table inet {table}\n"
            f"table inet {table} {{\n"
            f"  chain input {{\n"
            f"    type filter hook input priority -10; policy accept;\n"
            f"    iifname != \"lo\" tcp dport {{ {plist} }} drop\n"
            f"  }}\n"
            f"  chain output {{\n"
            f"    type filter hook output priority -10; policy accept;\n"
            f"    oifname \"lo\" tcp dport {{ {plist} }} meta skuid != 0 reject with tcp reset\n"
            f"  }}\n"
            f"}}\n")


def guard_ports(table: str, ports: list[int]) -> None:
    """Install (or replace) the table guarding ``ports``; PortGuardError when that is impossible."""
    if not ports:
        return
    nft = shutil.which("nft") or ("/usr/sbin/nft" if os.path.exists("/usr/sbin/nft") else None)
    if nft is None:
        raise PortGuardError("nft (package nftables; `make setup` installs it) is needed to keep BMv2's Thrift and "
                             "gRPC ports for root on this machine only; BMv2 itself listens on every address")
    done = subprocess.run([nft, "-f", "-"], input=rules(table, ports), capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise PortGuardError(f"nft refused the port rules for {table}: {done.stderr.strip()[-300:]}")


def unguard(table: str) -> bool:
    """Delete the table; True if it existed."""
    nft = shutil.which("nft") or "/usr/sbin/nft"
    try:
        done = subprocess.run([nft, "delete", "table", "inet", table], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0
