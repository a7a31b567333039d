"""`ethlab doctor`: check this host for what ethlab needs, and say what to install when something is missing."""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import re
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


_VERSION = re.compile(r"\d+\.\d+(?:\.\d+)*(?:[-.][\w]+)?")


def _version_line(tool: str) -> str:
    """The version a tool reports: p4c prints its name first and `Version X (SHA ...)` on the next line."""
    code, out = _run(tool, "--version")
    if code != 0 or not out:
        return "installed"
    for line in out.splitlines():
        if _VERSION.search(line):
            return line.strip()
    return out.splitlines()[0]


def tool_version(tool: str) -> str | None:
    """Just the version number (`1.15.0-c0ff3aba`, `1.2.4.17`), or None when the tool is absent or silent."""
    if shutil.which(tool) is None:
        return None
    found = _VERSION.search(_version_line(tool))
    return found.group(0) if found else None


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
    result.append(native_check())
    result.append(mpi_check())
    result += bmv2_checks()
    return result


def native_check() -> Check:
    """The C compiler the native pipeline needs (p4exec/native/): without one p4exec runs the Python pipeline."""
    from p4exec.native.build import compiler_available

    cc = compiler_available()
    if cc is None:
        return Check("C compiler (native pipeline)", False, "none ($CC, cc, gcc): p4exec runs the Python pipeline",
                     "make setup (installs gcc)", required=False)
    return Check("C compiler (native pipeline)", True, f"{cc}: p4exec compiles each program to C (the default)",
                 required=False)


def mpi_check() -> Check:
    """MPI for `ethlab run --ranks N` (vfabric/mpi.py): mpi4py, the library it starts, the launcher."""
    from vfabric.mpi import describe

    found = describe()
    launcher = found.get("mpiexec") or "no mpiexec"
    if "error" in found:
        return Check("MPI (mpi4py)", False, f"{found['error']}; {launcher}", "make setup (mpi4py + the mpich wheel)",
                     required=False)
    ok = found.get("mpiexec") is not None
    return Check("MPI (mpi4py)", ok, f"mpi4py {found.get('mpi4py')}, {found.get('library')}, {launcher}",
                 "make setup (the mpich wheel brings mpiexec)", required=False)


BMV2_FIX = ("put BMv2 (simple_switch_grpc, built with PI) and p4c (p4c-bm2-ss) on PATH; ethlab does not "
            "install them (README, 'BMv2')")
TESTED = {"simple_switch_grpc": "1.15.0", "p4c-bm2-ss": "1.2.4.17"}  # what the BMv2 tests last ran with


def bmv2_checks() -> list[Check]:
    """The optional reference target: both tools with their versions, the Thrift side channel's Python
    package, and whether the BMv2 tests will run or skip."""
    found = []
    for tool in ("simple_switch_grpc", "p4c-bm2-ss"):
        check = _tool(tool, BMV2_FIX, required=False)
        version = tool_version(tool) if check.ok else None
        if check.ok:
            tested = TESTED[tool]
            check.detail = (f"{version or 'version unknown'} ({shutil.which(tool)})"
                            + ("" if version and version.startswith(tested) else f"; tested with {tested}"))
        found.append(check)
    try:
        thrift = Check("python: thrift", True,
                       f"{importlib.metadata.version('thrift')} (BMv2 registers and queues)", required=False)
    except importlib.metadata.PackageNotFoundError:
        thrift = Check("python: thrift", False, "missing: BMv2 registers and queues need it",
                       "make setup (or pip install 'ethlab[bmv2]')", required=False)
    ready = all(c.ok for c in found)
    found.append(thrift)
    found.append(Check("BMv2 target", ready and thrift.ok,
                       "--target bmv2 usable; the BMv2 tests run" if ready and thrift.ok
                       else "--target bmv2 unavailable; the BMv2 tests skip", BMV2_FIX, required=False))
    return found


def run(args: argparse.Namespace) -> int:
    console = Console()
    table = Table(title="ethlab doctor")
    for column in ("check", "status", "detail", "what to do"):
        table.add_column(column)
    failed = 0
    found = checks()
    for check in found:
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
    elif all(c.ok for c in found if c.name == "BMv2 target"):
        console.print("[green]Ready for both targets (p4exec and BMv2).")
    else:
        console.print("[green]Ready for the embedded target (p4exec); BMv2 is optional.")
    return 1 if failed else 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("doctor", help="check this host and say what to install")
    parser.set_defaults(func=run)
