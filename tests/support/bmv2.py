"""BMv2 (simple_switch_grpc) for the tests that run against the reference target: whether it is on PATH
(and the skip reason when it is not), and one switch process on a Lab's veths."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from p4exec.switch.lab import Lab
from topologies.bmv2_launch import SWITCH, Bmv2Command, Bmv2Process, free_ports

TOOLS = (SWITCH, "p4c-bm2-ss")
MISSING = [tool for tool in TOOLS if shutil.which(tool) is None]
REASON = (f"BMv2 test: needs {' and '.join(TOOLS)} on PATH ({', '.join(MISSING)} not found; the reference "
          f"toolchain is not installed here)")
needs_bmv2 = [pytest.mark.bmv2, pytest.mark.skipif(bool(MISSING), reason=REASON)]


class Bmv2LabSwitch:
    """simple_switch_grpc without a program, port i = lab host i, CPU port 255; gRPC and Thrift on loopback."""

    def __init__(self, lab: Lab, device_id: int = 1, timeout: float = 60.0) -> None:
        self.device_id = device_id
        self.grpc_port, self.thrift_port = free_ports(2)
        self.addr = f"127.0.0.1:{self.grpc_port}"
        command = Bmv2Command(grpc_addr=self.addr, thrift_port=self.thrift_port, device_id=device_id,
                              interfaces={i: lab.sw_if(i) for i in range(1, lab.nhosts + 1)}, cpu_port=255,
                              log_level="warn")
        with tempfile.NamedTemporaryFile(prefix="bmv2-lab-", suffix=".log", delete=False) as log:
            self.log = Path(log.name)
        self.process = Bmv2Process(command, self.log)
        try:
            self.process.wait_ready(timeout)
        except Exception as err:
            self.close()
            raise RuntimeError(f"simple_switch_grpc did not come up: {err}") from None

    def output(self) -> str:
        return self.process.output()

    def close(self) -> None:
        self.process.stop()
        self.log.unlink(missing_ok=True)
