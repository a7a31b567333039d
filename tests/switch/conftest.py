"""Fixtures for the switch tests: namespaces + veths (prefix ethsw-), a switch process, frame I/O.

Everything created here is removed in the fixtures' teardown, also when a test fails.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from p4sim.switch.lab import Lab, SwitchProcess, switch_env
from p4sim.switch.nsio import read_frames, write_frames

ROOT = Path(__file__).resolve().parents[2]
BASIC_L3 = ROOT / "p4src" / "basic_l3.p4"
QUEUE_PROBE = Path(__file__).with_name("p4") / "queue_probe.p4"
FLOOD_CPU = Path(__file__).with_name("p4") / "flood_cpu.p4"



def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def lab() -> Iterator[Lab]:
    assert os.geteuid() == 0, "the switch tests need root (namespaces, raw sockets)"
    with Lab() as lab:
        yield lab


@pytest.fixture
def lab3() -> Iterator[Lab]:
    assert os.geteuid() == 0, "the switch tests need root (namespaces, raw sockets)"
    with Lab(nhosts=3) as lab:
        yield lab


def send_frames(lab: Lab, tmp: Path, host: int, frames: list[bytes]) -> None:
    """Send frames from a host's namespace, back to back."""
    path = tmp / f"frames-{host}.bin"
    write_frames(str(path), frames)
    subprocess.run(lab.nsio(host, "send", lab.host_if(host), str(path)), check=True, capture_output=True,
                   env=switch_env())


class Switch:
    """A running `p4sim switch` bound to the lab's ports, with its gRPC address and stats file."""

    def __init__(self, lab: Lab, tmp: Path, *extra: str, grpc: bool = True) -> None:
        self.lab = lab
        self.addr = f"127.0.0.1:{free_port()}"
        self.stats_path = tmp / "stats.json"
        args = ["--device-id", "1", "--stats-file", str(self.stats_path), "--log-console", *extra]
        args += ["--grpc-server-addr", self.addr] if grpc else ["--no-grpc"]
        self.proc = SwitchProcess(lab.switch_cmd(*args))
        self.proc.wait_ready()

    def connect(self, p4info):
        from controller.client import SwitchConnection

        conn = SwitchConnection(self.addr, device_id=1, p4info=p4info)
        conn.connect()
        return conn

    def stop(self) -> float:
        return self.proc.stop()

    def stats(self) -> dict:
        return json.loads(self.stats_path.read_text())


@pytest.fixture
def start_switch(lab: Lab, tmp_path: Path) -> Iterator:
    started: list[Switch] = []

    def start(*extra: str, grpc: bool = True) -> Switch:
        sw = Switch(lab, tmp_path, *extra, grpc=grpc)
        started.append(sw)
        return sw

    yield start
    for sw in started:
        sw.proc.close()


class Capture:
    """Frames arriving at a host's interface, captured by nsio in its namespace."""

    def __init__(self, lab: Lab, host: int, tmp: Path, count: int, max_seconds: float, idle: float) -> None:
        self.path = tmp / f"rx-h{host}-{count}.bin"
        cmd = lab.nsio(host, "recv", lab.host_if(host), str(self.path), "--max-seconds", str(max_seconds),
                       "--count", str(count), "--idle", str(idle))
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=switch_env())
        assert self.proc.stdout is not None and self.proc.stdout.readline().strip() == "ready"

    def result(self, timeout: float = 60.0) -> tuple[list[bytes], float]:
        """(frames, seconds between the first and the last)."""
        out, _ = self.proc.communicate(timeout=timeout)
        return read_frames(str(self.path)), float(out.split()[2])


@pytest.fixture
def capture(lab: Lab, tmp_path: Path):
    caps: list[Capture] = []

    def start(host: int, count: int = 0, max_seconds: float = 10.0, idle: float = 0.5) -> Capture:
        cap = Capture(lab, host, tmp_path, count, max_seconds, idle)
        caps.append(cap)
        return cap

    yield start
    for cap in caps:
        if cap.proc.poll() is None:
            cap.proc.kill()
            cap.proc.wait()


@pytest.fixture
def send(lab: Lab, tmp_path: Path):
    """send(host, frames, rate=pps) -> number sent, from the host's namespace."""

    def do(host: int, frames: list[bytes], rate: float = 0.0, repeat: int = 1) -> int:
        path = tmp_path / f"tx-h{host}.bin"
        write_frames(str(path), frames)
        cmd = lab.nsio(host, "send", lab.host_if(host), str(path), "--rate", str(rate), "--repeat", str(repeat))
        out = subprocess.run(cmd, capture_output=True, text=True, env=switch_env(), timeout=120, check=True)
        return int(out.stdout.split()[1])

    return do


def compiled(path: Path):
    """(p4info, device config bytes) of a program, compiled in this process as the controller would."""
    from p4sim.switch.program import load_program

    config = path.read_bytes()
    return load_program(config).p4info, config
