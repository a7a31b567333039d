"""A BMv2 `simple_switch_grpc` process for differential runs: packets over nanomsg, no interfaces.

The switch (command line: topologies/bmv2_launch.py) gets its program at start, a Thrift port for the
runtime side channel, a gRPC address for P4Runtime, and its packet channel and notification socket inside
a private temporary directory, so several runs can share the machine. `stop()` ends exactly this process.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from difftest.nanomsg import PacketChannel
from difftest.toolchain import SWITCH
from topologies.bmv2_launch import PRIORITY_QUEUES, Bmv2Command, Bmv2Process, Bmv2StartError, free_ports

__all__ = ["PRIORITY_QUEUES", "Bmv2StartError", "ReferenceSwitch", "free_port"]


def free_port() -> int:
    return free_ports(1)[0]


class ReferenceSwitch:
    """One running BMv2 with its packet channel; use as a context manager."""

    def __init__(self, json_path: Path | None, device_id: int = 0, priority_queues: int = PRIORITY_QUEUES,
                 start_timeout_s: float = 30.0) -> None:
        exe = shutil.which(SWITCH)
        if exe is None:
            raise Bmv2StartError(f"{SWITCH} not on PATH")
        self.dir = Path(tempfile.mkdtemp(prefix="ethlab-difftest-"))
        self.thrift_port, grpc_port = free_ports(2)  # distinct: two separate picks may coincide
        self.grpc_addr = f"127.0.0.1:{grpc_port}"
        self.packet_addr = f"ipc://{self.dir}/packets.ipc"
        self.log_path = self.dir / "switch.log"
        command = Bmv2Command(grpc_addr=self.grpc_addr, thrift_port=self.thrift_port, device_id=device_id,
                              json_path=str(json_path) if json_path else None, cpu_port=None,
                              packet_in=self.packet_addr, notifications_addr=f"ipc://{self.dir}/notifications.ipc",
                              priority_queues=priority_queues, executable=exe)
        try:
            self.process = Bmv2Process(command, self.log_path)
        except BaseException:
            shutil.rmtree(self.dir, ignore_errors=True)
            raise
        try:
            self.process.wait_ready(start_timeout_s)
            self.packets = PacketChannel(self.packet_addr)
        except BaseException:
            self.stop()
            raise

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self) -> None:
        if getattr(self, "packets", None) is not None:
            self.packets.close()
        self.process.stop(timeout=5)
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> ReferenceSwitch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
