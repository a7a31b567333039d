"""BMv2 (simple_switch_grpc) for the tests that run against the reference target: whether it is on PATH
(and the skip reason when it is not), and one switch process on a Lab's veths."""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from p4exec.switch.lab import Lab
from tests.support.controller import free_port

TOOLS = ("simple_switch_grpc", "p4c-bm2-ss")
MISSING = [tool for tool in TOOLS if shutil.which(tool) is None]
REASON = (f"BMv2 test: needs {' and '.join(TOOLS)} on PATH ({', '.join(MISSING)} not found; the reference "
          f"toolchain is not installed here)")
needs_bmv2 = [pytest.mark.bmv2, pytest.mark.skipif(bool(MISSING), reason=REASON)]


def listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


class Bmv2LabSwitch:
    """simple_switch_grpc without a program, port i = lab host i, CPU port 255; gRPC and Thrift on loopback."""

    def __init__(self, lab: Lab, device_id: int = 1, timeout: float = 60.0) -> None:
        self.device_id = device_id
        self.grpc_port, self.thrift_port = free_port(), free_port()
        self.addr = f"127.0.0.1:{self.grpc_port}"
        ifs = [a for i in range(1, lab.nhosts + 1) for a in ("-i", f"{i}@{lab.sw_if(i)}")]
        cmd = ["simple_switch_grpc", "--no-p4", *ifs, "--device-id", str(device_id), "--thrift-port",
               str(self.thrift_port), "--log-console", "-L", "warn", "--", "--grpc-server-addr", self.addr,
               "--cpu-port", "255"]
        self.log = tempfile.NamedTemporaryFile(prefix="bmv2-lab-", suffix=".log", delete=False)  # noqa: SIM115
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while not (listening(self.grpc_port) and listening(self.thrift_port)):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise RuntimeError(f"simple_switch_grpc did not come up:\n{self.output()}")
            time.sleep(0.1)

    def output(self) -> str:
        return Path(self.log.name).read_text(errors="replace")[-3000:]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        Path(self.log.name).unlink(missing_ok=True)
