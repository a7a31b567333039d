"""The one place that knows simple_switch_grpc's command line, and how to tell that the process is up.

Fabric switches (topologies/switches.py `Bmv2Switch`), the test switch on a Lab's veths
(tests/support/bmv2.py), the benchmark (bench/switch.py) and difftest's reference switch (difftest/bmv2.py)
all start BMv2 from a `Bmv2Command`, so an option every BMv2 switch needs (`--priority-queues`) is given
in one place. Generic bmv2 options come before `--`, simple_switch_grpc's own after it.

`--priority-queues` exists from BMv2 1.15.1 on; 1.15.0 has the queue count compiled in (8 when built with
SSWITCH_PRIORITY_QUEUEING_ON) and refuses the option, so it is given only to a build whose `--help` lists it."""

from __future__ import annotations

import functools
import shutil
import socket
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

SWITCH = "simple_switch_grpc"

# Strict-priority egress queues per port: one per value of v1model's 3-bit standard_metadata.priority.
# ethplus.p4 queues transport feedback and trimmed packets at priority 7; simple_switch drops a packet whose
# priority is not below its number of queues (1 by default) and counts it nowhere.
PRIORITY_QUEUES = 8


@functools.cache
def accepts_priority_queues(executable: str) -> bool:
    """Whether this simple_switch_grpc takes `--priority-queues` (asked once per executable and process).

    A build that cannot be run here is assumed current (it takes the option): starting it reports why it
    does not run. Only a build that runs and does not list the option is started without it; a 1.15.0 build
    with priority queueing compiled in then has its 8 queues, one without it a single FIFO per port."""
    path = shutil.which(executable)
    if path is None:
        return True
    try:
        done = subprocess.run([path, "--help"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return True
    # its target options are listed (with --grpc-server-addr) and this one is not among them: a 1.15.0 build
    return b"--priority-queues" in done.stdout or b"--grpc-server-addr" not in done.stdout


def free_ports(n: int, host: str = "127.0.0.1") -> list[int]:
    """`n` distinct TCP ports free now. The sockets are held open together while the kernel picks, because two
    pick-and-close calls in a row may get the same port back: BMv2's gRPC and Thrift servers then collide."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind((host, 0))
        return [int(s.getsockname()[1]) for s in socks]
    finally:
        for s in socks:
            s.close()


class Bmv2StartError(RuntimeError):
    """simple_switch_grpc missing, exited early, or never opened its ports; the message quotes its log."""


@dataclass(frozen=True)
class Bmv2Command:
    """What one simple_switch_grpc process is started with; `argv()` is its command line."""

    grpc_addr: str  # host:port or unix:PATH
    thrift_port: int
    device_id: int = 0
    json_path: str | None = None  # None: --no-p4 (the pipeline comes over P4Runtime)
    interfaces: Mapping[int, str] = field(default_factory=dict)  # port number -> interface name
    cpu_port: int | None = 255
    log_level: str | None = None  # console log at this level (stdout), None: no log
    pcap_dir: str | None = None
    packet_in: str | None = None  # nanomsg address of a packet channel instead of interfaces
    notifications_addr: str | None = None
    priority_queues: int = PRIORITY_QUEUES
    extra_args: tuple[str, ...] = ()  # more generic bmv2 options (before `--`)
    executable: str = SWITCH

    def argv(self) -> list[str]:
        cmd = [self.executable, self.json_path or "--no-p4"]
        for port, ifname in sorted(self.interfaces.items()):
            cmd += ["-i", f"{port}@{ifname}"]
        cmd += ["--device-id", str(self.device_id), "--thrift-port", str(self.thrift_port)]
        if self.packet_in:
            cmd += ["--packet-in", self.packet_in]
        if self.notifications_addr:
            cmd += ["--notifications-addr", self.notifications_addr]
        if self.log_level:
            cmd += ["--log-console", "-L", self.log_level]
        if self.pcap_dir:
            cmd.append(f"--pcap={self.pcap_dir}")  # an implicit-value option: a separate word is not taken
        cmd += list(self.extra_args)
        cmd += ["--", "--grpc-server-addr", self.grpc_addr]
        if accepts_priority_queues(self.executable):
            cmd += ["--priority-queues", str(self.priority_queues)]
        if self.cpu_port is not None:
            cmd += ["--cpu-port", str(self.cpu_port)]
        return cmd

    @property
    def grpc_port(self) -> int | None:
        """The TCP port of the gRPC server (None for a Unix socket)."""
        if self.grpc_addr.startswith("unix:"):
            return None
        return int(self.grpc_addr.rsplit(":", 1)[1])


def listening(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex((host, port)) == 0


class Bmv2Process:
    """A simple_switch_grpc child started from a Bmv2Command, its output in `log` (a file, never a pipe)."""

    def __init__(self, command: Bmv2Command, log: Path | None = None) -> None:
        self.command = command
        self.log_path = log
        out: IO[bytes] | int = log.open("wb") if log is not None else subprocess.DEVNULL
        try:
            self.proc = subprocess.Popen(command.argv(), stdout=out, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL)
        except OSError as err:
            raise Bmv2StartError(f"cannot run {command.executable}: {err.strerror}") from None
        finally:
            if not isinstance(out, int):
                out.close()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def output(self, tail: int = 3000) -> str:
        if self.log_path is None or not self.log_path.exists():
            return "(no log)"
        return self.log_path.read_text(errors="replace")[-tail:]

    def wait_ready(self, timeout: float = 60.0, thrift_grace: float = 15.0) -> None:
        """Until gRPC and Thrift both listen (simple_switch_grpc opens Thrift after gRPC).

        A simple_switch_grpc built without its Thrift server accepts `--thrift-port` and ignores it, so a
        gRPC port that is up while Thrift stays shut for `thrift_grace` seconds is reported as that build
        problem at once rather than as a timeout a minute later."""
        ports = [p for p in (self.command.grpc_port, self.command.thrift_port) if p is not None]
        deadline = time.monotonic() + timeout
        grpc_up_at: float | None = None
        while not all(listening(port) for port in ports):
            now = time.monotonic()
            if self.proc.poll() is not None:
                raise Bmv2StartError(f"{self.command.executable} exited with status {self.proc.returncode}:\n"
                                     f"{self.output()}")
            grpc = self.command.grpc_port
            if grpc is not None and grpc_up_at is None and listening(grpc):
                grpc_up_at = now
            if grpc_up_at is not None and now - grpc_up_at > thrift_grace:
                raise Bmv2StartError(
                    f"{self.command.executable}: its gRPC server is up on port {grpc} but the Thrift port "
                    f"{self.command.thrift_port} did not open within {thrift_grace:g} s; this build of "
                    f"simple_switch_grpc probably has no Thrift server (it is optional in BMv2: the "
                    f"simple_switch_grpc target has to be configured with Thrift). ethlab sets egress queue "
                    f"rates over Thrift, so it needs it.\n{self.output()}")
            if now > deadline:
                raise Bmv2StartError(f"{self.command.executable}: ports {ports} not open after {timeout:g} s:\n"
                                     f"{self.output()}")
            time.sleep(0.05)

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM, then SIGKILL after `timeout`; only this process (by its Popen handle)."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)

    def close(self) -> None:
        """The same as stop() (the name p4exec's SwitchProcess uses, so callers treat both alike)."""
        self.stop()
