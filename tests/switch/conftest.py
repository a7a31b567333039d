"""Fixtures for the switch tests: namespaces + veths (prefix ethsw-), a switch process, frame I/O.

Everything created here is removed in the fixtures' teardown, also when a test fails.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest

from p4exec.switch.lab import Lab, switch_env
from p4exec.switch.nsio import write_frames
from tests.support.switch import BASIC_L3, Capture, Switch, compiled, table_entry


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




@pytest.fixture
def routed_basic_l3() -> Callable[[Switch], AbstractContextManager]:
    """`with routed_basic_l3(sw) as conn:` basic_l3.p4 loaded over gRPC on a started switch with one route,
    10.0.2.0/24 out of port 2 to 00:00:00:00:02:02; the connection is closed when the block ends."""

    @contextmanager
    def routed(sw: Switch) -> Iterator:
        p4info, config = compiled(BASIC_L3)
        conn = sw.connect(p4info)
        try:
            conn.set_pipeline(device_config=config)
            conn.insert(table_entry(conn, "MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": "10.0.2.0/24"},
                                    "MyIngress.ipv4_forward", {"dstAddr": "00:00:00:00:02:02", "port": 2}))
            yield conn
        finally:
            conn.close()

    return routed
