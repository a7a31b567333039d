"""The two targets of a random differential behind one seam: a P4Runtime session (the controller's own
`SwitchConnection`) plus frame in / frames out by port number.

`EmbeddedTarget` runs p4exec's device in this process (its P4Runtime server on a loopback port, frames
straight into the pipeline); `Bmv2Target` runs `simple_switch_grpc` with frames over nanomsg. Neither has a
CPU port configured, so a frame the program sends to the CPU port is an ordinary output on that port.
"""

from __future__ import annotations

from typing import Protocol

from controller.artifacts import PipelineArtifacts
from controller.bmv2 import Bmv2SideChannel
from controller.bmv2_thrift import forget_session
from controller.client import SwitchConnection
from difftest.bmv2 import PRIORITY_QUEUES, ReferenceSwitch, free_port
from p4exec.p4runtime.server import P4RuntimeServer
from p4exec.switch.inprocess import InProcessDevice


class DiffTarget(Protocol):
    name: str
    conn: SwitchConnection

    def send(self, port: int, frame: bytes) -> None: ...

    def collect(self, expected: int) -> list[tuple[int, bytes]]:
        """Every output since the last call; `expected` is how many the other target produced (a hint for
        how long to wait, not a limit)."""
        ...

    def close(self) -> None: ...


def _connect(address: str, device_id: int, artifacts: PipelineArtifacts) -> SwitchConnection:
    conn = SwitchConnection(address, device_id=device_id, p4info=artifacts.p4info, timeout=60.0)
    conn.connect()
    conn.set_pipeline(artifacts.device_config, artifacts.p4info)
    return conn


class EmbeddedTarget:
    name = "p4exec"

    def __init__(self, artifacts: PipelineArtifacts, device_id: int = 1) -> None:
        self.device = InProcessDevice(device_id=device_id, cpu_port=None)
        self.server = P4RuntimeServer(self.device, f"127.0.0.1:{free_port()}").start()
        self._out: list[tuple[int, bytes]] = []
        try:
            self.conn = _connect(self.server.address, device_id, artifacts)
        except BaseException:
            self.server.stop()
            raise

    def send(self, port: int, frame: bytes) -> None:
        self._out += self.device.inject(port, frame)

    def collect(self, expected: int) -> list[tuple[int, bytes]]:
        out, self._out = self._out, []
        return out

    def close(self) -> None:
        self.conn.close()
        self.server.stop()


class Bmv2Target:
    name = "BMv2"

    def __init__(self, artifacts: PipelineArtifacts, device_id: int = 1, settle_s: float = 0.002,
                 max_wait_s: float = 5.0, priority_queues: int = PRIORITY_QUEUES) -> None:
        self.switch = ReferenceSwitch(None, device_id=device_id, priority_queues=priority_queues)
        self.settle_s = settle_s
        self.max_wait_s = max_wait_s
        try:
            self.conn = _connect(self.switch.grpc_addr, device_id, artifacts)
            self.conn.bmv2 = Bmv2SideChannel(self.switch.thrift_port, "difftest-bmv2")
        except BaseException:
            self.switch.stop()
            raise

    def send(self, port: int, frame: bytes) -> None:
        self.switch.packets.send(port, frame)

    def collect(self, expected: int) -> list[tuple[int, bytes]]:
        return self.switch.packets.collect(expected, self.settle_s, self.max_wait_s)

    def close(self) -> None:
        self.conn.close()
        forget_session(self.switch.thrift_port)  # the side channel's Thrift session ends with the switch
        self.switch.stop()
