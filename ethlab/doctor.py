"""`ethlab doctor`: check this host for what ethlab needs, and say what to install when something is missing."""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass

from rich.console import Console
from rich.table import Table


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    required: bool = True


def _run(*cmd: str) -> tuple[int, str]:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as err:
        return 1, str(err)
    return done.returncode, (done.stdout or done.stderr).strip()


def _version_line(tool: str) -> str:
    code, out = _run(tool, "--version")
    return out.splitlines()[0] if code == 0 and out else "installed"


def _package(name: str) -> Check:
    try:
        return Check(f"python: {name}", True, importlib.metadata.version(name))
    except importlib.metadata.PackageNotFoundError:
        return Check(f"python: {name}", False, "missing", "make setup")


def _tool(tool: str, fix: str, required: bool = True) -> Check:
    # Also look beside this Python: console scripts of the venv work without activating it.
    path = shutil.which(tool) or shutil.which(tool, path=os.path.dirname(sys.executable))
    if path is None:
        return Check(tool, False, "not on PATH", fix, required)
    return Check(tool, True, f"{_version_line(tool)} ({path})", required=required)


def checks() -> list[Check]:
    """Everything `ethlab up` and the tests rely on; BMv2 and p4c are optional (the embedded target is default)."""
    result = [Check("root", os.geteuid() == 0, f"uid {os.geteuid()}", "run as root (Mininet needs it)")]
    result.append(Check("network namespaces", os.path.exists("/proc/self/ns/net"), "/proc/self/ns/net",
                        "a kernel with CONFIG_NET_NS"))
    result.append(_tool("ip", "apt-get install iproute2"))
    code, out = _run("tc", "qdisc", "help")
    result.append(Check("tc (htb/tbf)", shutil.which("tc") is not None, "present" if code in (0, 255) else out,
                        "apt-get install iproute2"))
    result.append(_tool("mnexec", "apt-get install mininet"))
    result.append(_tool("ping", "apt-get install iputils-ping"))
    try:
        import mininet.net  # noqa: F401

        result.append(Check("python: mininet", True, "importable"))
    except ImportError:
        result.append(Check("python: mininet", False, "not importable from this Python", "make setup"))
    for name in ("ethlab", "p4runtime", "protobuf", "grpcio", "lark", "scapy"):
        result.append(_package(name))
    result.append(_tool("p4exec", "make setup (installs the embedded target into .venv)"))
    bmv2_fix = "Ubuntu: scripts/provision.sh installs the p4lang packages (or use the Vagrant VM)"
    result.append(_tool("simple_switch_grpc", bmv2_fix, required=False))
    result.append(_tool("p4c-bm2-ss", bmv2_fix, required=False))
    # BMv2 queue rates/depths and register access go over Thrift: PI's P4Runtime server lacks them.
    result.append(_tool("simple_switch_CLI", bmv2_fix, required=False))
    return result


def run(args: argparse.Namespace) -> int:
    console = Console()
    table = Table(title="ethlab doctor")
    for column in ("check", "status", "detail", "what to do"):
        table.add_column(column)
    failed = 0
    for check in checks():
        if check.ok:
            status = "[green]ok"
        elif check.required:
            status, failed = "[red]missing", failed + 1
        else:
            status = "[yellow]optional"
        table.add_row(check.name, status, check.detail, "" if check.ok else check.fix)
    console.print(table)
    if failed:
        console.print(f"[red]{failed} required item(s) missing.")
    else:
        console.print("[green]Ready for the embedded target (p4exec).")
    return 1 if failed else 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("doctor", help="check this host and say what to install")
    parser.set_defaults(func=run)
