"""A BMv2 `simple_switch_grpc` process for differential runs: packets over nanomsg, no interfaces.

The switch gets its program at start, a Thrift port for `simple_switch_CLI`, a gRPC address for P4Runtime,
and its packet channel and notification socket inside a private temporary directory, so several runs can
share the machine. `stop()` ends exactly this process.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from difftest.nanomsg import PacketChannel
from difftest.toolchain import SWITCH

# simple_switch drops a packet whose standard_metadata.priority is not below its number of priority queues
# (1 by default) and counts it nowhere; ethplus.p4 sends feedback and trimmed packets at priority 7.
PRIORITY_QUEUES = 8


class Bmv2StartError(RuntimeError):
    """simple_switch_grpc missing, exited early, or never opened its Thrift port."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


class ReferenceSwitch:
    """One running BMv2 with its packet channel; use as a context manager."""

    def __init__(self, json_path: Path | None, device_id: int = 0, priority_queues: int = PRIORITY_QUEUES,
                 start_timeout_s: float = 30.0) -> None:
        exe = shutil.which(SWITCH)
        if exe is None:
            raise Bmv2StartError(f"{SWITCH} not on PATH")
        self.dir = Path(tempfile.mkdtemp(prefix="ethlab-difftest-"))
        self.thrift_port = free_port()
        self.grpc_addr = f"127.0.0.1:{free_port()}"
        self.packet_addr = f"ipc://{self.dir}/packets.ipc"
        self.log_path = self.dir / "switch.log"
        cmd = [exe, str(json_path) if json_path else "--no-p4", "--device-id", str(device_id),
               "--thrift-port", str(self.thrift_port), "--packet-in", self.packet_addr,
               "--notifications-addr", f"ipc://{self.dir}/notifications.ipc",
               "--", "--priority-queues", str(priority_queues), "--grpc-server-addr", self.grpc_addr]
        with self.log_path.open("wb") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            self._wait_ready(start_timeout_s)
            self.packets = PacketChannel(self.packet_addr)
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while not _listening(self.thrift_port):
            if self.proc.poll() is not None:
                raise Bmv2StartError(f"{SWITCH} exited with status {self.proc.returncode}: {self.log()[-800:]}")
            if time.monotonic() > deadline:
                raise Bmv2StartError(f"{SWITCH}: Thrift port {self.thrift_port} not open after {timeout_s:g}s")
            time.sleep(0.05)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self) -> None:
        if getattr(self, "packets", None) is not None:
            self.packets.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> ReferenceSwitch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
