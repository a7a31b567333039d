"""Mininet node classes for ethlab: hosts in *named* namespaces, and P4 switch processes.

`P4ExecSwitch` (ethlab's embedded target, `p4exec switch`) and `Bmv2Switch` (`simple_switch_grpc`) share one
constructor and lifecycle (`P4Switch`): start() launches the process with one `-i PORT@IFACE` per port,
wait_ready() waits for its gRPC port, stop() terminates it within a bounded time. They run in the root
namespace (like Mininet's user switches); every pid goes into the run state as soon as it exists.
What a target configures once its switch listens (BMv2's queues over Thrift) is the Target's
(controller/targets.py), handed in as `on_ready`."""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mininet.link import Link
from mininet.node import Host, Switch

from p4exec.privdir import ensure_private_dir, open_new
from p4exec.switch.forkserver import ForkedProcess, ForkServer, ForkServerError
from topologies.bmv2_launch import PRIORITY_QUEUES, SWITCH, Bmv2Command
from topologies.run_records import RunState, all_runs


class SwitchStartError(RuntimeError):
    """A switch process exited or did not open its gRPC port in time; the message quotes its log."""


class EthlabHost(Host):
    """A Mininet host whose namespace is also reachable by name (`ip netns exec <netns> ...`), so other tools
    (traffic engine, tcpdump, users) can enter it without knowing the shell's pid. The builder names all
    namespaces in one `ip -batch` (attach_netns), which is much faster than one `ip` process per host."""

    def __init__(self, name: str, *, netns: str, run: RunState | None = None, **params: Any) -> None:
        params.pop("inNamespace", None)
        Host.__init__(self, name, inNamespace=True, **params)
        self.netns = netns
        if run is not None:
            run.add_pid(f"host:{name}", self.pid)


def attach_netns(hosts: list[EthlabHost], run: RunState | None = None) -> None:
    """Give every host's namespace its name (recorded first, so a failure half-way stays cleanable)."""
    if run is not None:
        run.netns.extend(h.netns for h in hosts)
        run.save()
    lines = "".join(f"netns attach {h.netns} {h.pid}\n" for h in hosts)
    r = subprocess.run(["ip", "-batch", "-"], input=lines, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"naming host namespaces: {r.stderr.strip()}")


class PrecreatedLink(Link):
    """A Mininet link whose veth pair already exists (the builder creates all pairs in one `ip -batch`)."""

    @classmethod
    def makeIntfPair(cls, intfname1: str, intfname2: str, addr1: str | None = None,  # noqa: N802
                     addr2: str | None = None, node1: Any = None, node2: Any = None,
                     deleteIntfs: bool = True) -> None:  # noqa: N803
        return None


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _listening(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


def allocate_ports(n: int, start: int = 50100, avoid: set[int] | None = None) -> list[int]:
    """n free loopback TCP ports from `start` up, skipping ports recorded by other ethlab runs."""
    taken = set(avoid or ())
    for r in all_runs():
        taken.update(r.grpc_ports.values())
    out: list[int] = []
    port = start
    while len(out) < n:
        if port > 65000:
            raise RuntimeError("no free TCP ports for switch gRPC servers")
        if port not in taken and _port_free(port):
            out.append(port)
        port += 1
    return out


class P4Switch(Switch):
    """A P4Runtime switch process attached to this node's interfaces (port number = Mininet port)."""

    target = "p4"
    # The fabric may give this target a Unix-socket gRPC address (unix:PATH in a root-only directory)
    unix_grpc = False
    # The programs a fabric runs (p4src/ethplus.p4, basic_l3.p4) route IPv4 and write every hop's destination
    # MAC themselves, so a host sends a whole plane to ONE gateway neighbour, the switch port it is cabled to.
    # A switch that forwards on the destination MAC (a Linux bridge) says False: hosts then ARP for each peer.
    routes_ipv4 = True

    def __init__(self, name: str, *, device_id: int, grpc_port: int, json_path: str | None = None,
                 log_dir: str = "/tmp", cpu_port: int | None = 255, pcap_dir: str | None = None,
                 log_level: str = "warn", queue_rates_pps: dict[int, float] | None = None,
                 queue_depth: int | None = None, run: RunState | None = None, extra_args: tuple[str, ...] = (),
                 grpc_address: str | None = None, on_ready: Callable[[P4Switch], None] | None = None,
                 **params: Any) -> None:
        params.pop("inNamespace", None)  # Mininet.addSwitch passes it; these switches live in the root namespace
        Switch.__init__(self, name, dpid=f"{device_id:x}", inNamespace=False, **params)
        self.device_id = device_id
        self.grpc_port = grpc_port
        self.grpc_address = grpc_address  # unix:PATH, or None for TCP loopback on grpc_port
        self.json_path = json_path
        self.log_dir = Path(log_dir)
        self.cpu_port = cpu_port
        self.pcap_dir = pcap_dir
        self.log_level = log_level
        self.queue_rates_pps = dict(queue_rates_pps or {})
        self.queue_depth = queue_depth
        self.run = run
        self.extra_args = tuple(extra_args)
        self.on_ready = on_ready
        self.proc: subprocess.Popen[bytes] | ForkedProcess | None = None
        if run is not None:  # the fabric saves the run state once all its switch nodes exist
            run.add_pid(f"shell:{name}", self.pid, save=False)
            run.grpc_ports[name] = grpc_port

    # ---- what differs between targets ---------------------------------------------------------------
    def command(self) -> list[str]:
        raise NotImplementedError

    def after_start(self) -> None:
        """Target-specific configuration once the process listens (e.g. BMv2 queue rates)."""
        if self.on_ready is not None:
            self.on_ready(self)

    # ---- shared lifecycle ---------------------------------------------------------------------------
    @property
    def grpc_addr(self) -> str:
        return self.grpc_address or f"127.0.0.1:{self.grpc_port}"

    def _grpc_listening(self) -> bool:
        if self.grpc_address and self.grpc_address.startswith("unix:"):
            path = self.grpc_address[len("unix:"):].removeprefix("//")
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(0.2)
                return s.connect_ex(path) == 0
        return _listening(self.grpc_port)

    @property
    def log_path(self) -> Path:
        return self.log_dir / f"{self.name}.log"

    @property
    def out_path(self) -> Path:
        return self.log_dir / f"{self.name}.out"

    def port_map(self) -> dict[int, str]:
        """Switch port number -> interface name, without Mininet's loopback control interface."""
        return {p: i.name for p, i in sorted(self.intfs.items()) if i.name != "lo"}

    def interface_args(self) -> list[str]:
        args: list[str] = []
        for port, ifname in self.port_map().items():
            args += ["-i", f"{port}@{ifname}"]
        return args

    def start(self, controllers: list[Any] | None = None) -> None:
        """Launch the switch process (does not wait: call wait_ready, so many switches start in parallel)."""
        if not self.log_dir.is_dir():  # the fabric made it fresh and private; a caller's own is checked too
            self.log_dir.parent.mkdir(parents=True, exist_ok=True)
        ensure_private_dir(self.log_dir)
        cmd = self.command()
        self.cmdline = cmd
        with open_new(self.out_path, text=False) as out:  # never through a symlink planted at that name
            self.proc = self.launch(cmd, out)
        if self.run is not None:
            self.run.add_pid(f"switch:{self.name}", self.proc.pid)

    def launch(self, cmd: list[str], out: Any) -> subprocess.Popen[bytes] | ForkedProcess:
        """Run the switch command, output to `out` (an open file), in its own session."""
        try:
            return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True)
        except OSError as err:
            raise SwitchStartError(f"{self.name}: cannot run {cmd[0]}: {err.strerror}") from None

    def wait_ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is None or self.proc.poll() is not None:
                raise SwitchStartError(f"{self.name}: {self.target} switch exited "
                                       f"(status {None if self.proc is None else self.proc.returncode}); "
                                       f"{self.out_path}:\n{self.tail()}")
            if self._grpc_listening():
                self.after_start()
                return
            time.sleep(0.1)
        raise SwitchStartError(f"{self.name}: gRPC server {self.grpc_addr} not open after {timeout:g} s; "
                               f"{self.out_path}:\n{self.tail()}")

    def tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.out_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no output)"

    def connected(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop_process(self, timeout: float = 5.0) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()  # our own child, by its Popen handle
            self.proc.wait(2.0)

    def stop(self, deleteIntfs: bool = True) -> None:  # noqa: N803 (Mininet's signature)
        self.stop_process()
        Switch.stop(self, deleteIntfs)


_P4EXEC_PREFIX = [sys.executable, "-m", "p4exec.switch"]
# Memory a fabric switch's program may declare for registers, counters and meters: a fabric runs many switches
# on one machine, so less than a standalone switch's 1 GiB (ethplus.p4 declares ~120 KiB).
FABRIC_STATE_BUDGET_MB = 256


def _p4exec_prefix() -> list[str]:
    """`python -m p4exec.switch` = `p4exec switch` (same flags), with the interpreter running ethlab, so the
    switch never depends on PATH or on which subcommands the `p4exec` script registers."""
    return list(_P4EXEC_PREFIX)


class P4ExecSwitch(P4Switch):
    """ethlab's embedded target. Queue rates go on the command line (`--queue-rate-port P:PPS`).

    With a `forkserver` (the fabric gives all its switches one), the process is forked from that warmed-up
    server instead of started from scratch: same flags, same code, a fraction of the CPU."""

    target = "p4exec"
    unix_grpc = True

    def __init__(self, name: str, *, forkserver: ForkServer | None = None, **params: Any) -> None:
        P4Switch.__init__(self, name, **params)
        self.forkserver = forkserver

    def launch(self, cmd: list[str], out: Any) -> subprocess.Popen[bytes] | ForkedProcess:
        if self.forkserver is None or not self.forkserver.alive() or cmd[:3] != _P4EXEC_PREFIX:
            return P4Switch.launch(self, cmd, out)
        try:
            return self.forkserver.spawn(cmd[3:], self.out_path)
        except ForkServerError as err:
            raise SwitchStartError(f"{self.name}: {err}") from None

    def command(self) -> list[str]:
        cmd = _p4exec_prefix()
        cmd += [self.json_path] if self.json_path else ["--no-p4"]
        cmd += self.interface_args()
        cmd += ["--device-id", str(self.device_id), "--grpc-server-addr", self.grpc_addr]
        if self.cpu_port is not None:
            cmd += ["--cpu-port", str(self.cpu_port)]
        cmd += ["--log-file", str(self.log_path), "-L", self.log_level]
        cmd += ["--stats-file", str(self.log_dir / f"{self.name}.stats.json")]
        cmd += ["--priority-queues", str(PRIORITY_QUEUES)]  # as many queues as a BMv2 fabric switch
        cmd += ["--state-budget-mb", str(FABRIC_STATE_BUDGET_MB)]
        if self.pcap_dir:
            cmd.append(f"--pcap={self.pcap_dir}")  # an implicit-value option: a separate word is not taken
        if self.queue_depth:
            cmd += ["--queue-depth", str(self.queue_depth)]
        for port, pps in sorted(self.queue_rates_pps.items()):
            cmd += ["--queue-rate-port", f"{port}:{pps:g}"]
        if "--link-layer" in self.extra_args:
            cmd += ["--link-name", self.name]  # link errors keyed by node:port, as vfabric keys them
        return cmd + list(self.extra_args)


class Bmv2Switch(P4Switch):
    """BMv2's simple_switch_grpc. Target options go after `--`; queue rates are set over Thrift once it runs."""

    target = "bmv2"

    def __init__(self, name: str, *, thrift_port: int | None = None, **params: Any) -> None:
        P4Switch.__init__(self, name, **params)
        self.thrift_port = thrift_port if thrift_port is not None else self.grpc_port + 1000

    @staticmethod
    def available() -> bool:
        return shutil.which(SWITCH) is not None

    def command(self) -> list[str]:
        return Bmv2Command(grpc_addr=self.grpc_addr, thrift_port=self.thrift_port, device_id=self.device_id,
                           json_path=self.json_path, interfaces=self.port_map(), cpu_port=self.cpu_port,
                           log_level=self.log_level, pcap_dir=self.pcap_dir, extra_args=self.extra_args).argv()

    def wait_thrift(self, timeout: float = 15.0) -> None:
        """simple_switch_grpc opens its Thrift server only after the gRPC one
        (targets/simple_switch_grpc/switch_runner.cpp): wait for it."""
        deadline = time.monotonic() + timeout
        while not _listening(self.thrift_port):
            if self.proc is None or self.proc.poll() is not None or time.monotonic() > deadline:
                raise SwitchStartError(f"{self.name}: Thrift port {self.thrift_port} not open, so queue rates and "
                                       f"depths cannot be set (simple_switch_grpc built without Thrift?); "
                                       f"{self.out_path}:\n{self.tail()}")
            time.sleep(0.1)
