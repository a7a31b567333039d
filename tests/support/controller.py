"""Helpers for the controller tests that talk to real `p4exec switch` processes (fixtures in conftest.py)."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

from controller.artifacts import PipelineArtifacts, build_artifacts
from p4exec.switch.lab import Lab, SwitchProcess, switch_env
from p4exec.switch.nsio import read_frames, write_frames

HERE = Path(__file__).resolve().parents[1] / "controller"
CLIENT_LAB = HERE / "p4" / "client_lab.p4"


def install_fake_tool(tmp_path: Path, monkeypatch, name: str, script: str) -> Path:
    """Put an executable stand-in for a missing binary (p4c-bm2-ss, simple_switch_CLI) first on PATH.
    Only for BMv2 tools that are not installed here; nothing on the p4exec path is faked."""
    import os
    import stat

    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    tool = bindir / name
    tool.write_text(script)
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    return tool


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def lab_artifacts(tmp: Path) -> PipelineArtifacts:
    return build_artifacts(CLIENT_LAB, "p4exec", build_dir=tmp)


class LabSwitch:
    """A `p4exec switch` (no program loaded) with one port per lab host, port i = host i."""

    def __init__(self, lab: Lab, device_id: int = 1) -> None:
        self.lab = lab
        self.device_id = device_id
        self.addr = f"127.0.0.1:{free_port()}"
        cmd = lab.switch_cmd("--no-p4", "--device-id", str(device_id), "--grpc-server-addr", self.addr,
                             "--grpc-allow-local-users", "--cpu-port", "255", "--log-console")
        self.proc = SwitchProcess(cmd)
        self.proc.wait_ready()

    def close(self) -> None:
        self.proc.close()


def send_frames(lab: Lab, tmp: Path, host: int, frames: list[bytes]) -> None:
    path = tmp / f"tx-h{host}.bin"
    write_frames(str(path), frames)
    subprocess.run(lab.nsio(host, "send", lab.host_if(host), str(path)), check=True, capture_output=True,
                   env=switch_env(), timeout=30)


class Capture:
    """Frames arriving at a lab host, captured in its namespace until `count` frames or `seconds` passed."""

    def __init__(self, lab: Lab, tmp: Path, host: int, count: int = 0, seconds: float = 20.0) -> None:
        self.path = tmp / f"rx-h{host}-{id(self)}.bin"
        cmd = lab.nsio(host, "recv", lab.host_if(host), str(self.path), "--max-seconds", str(seconds),
                       "--count", str(count))
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=switch_env())
        assert self.proc.stdout is not None and self.proc.stdout.readline().strip() == "ready"

    def frames(self, timeout: float = 30.0) -> list[bytes]:
        self.proc.communicate(timeout=timeout)
        return read_frames(str(self.path))

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def ether(dst: str, src: str = "02:00:00:00:00:01", ether_type: int = 0x88B6, payload: bytes = b"") -> bytes:
    """A raw Ethernet frame (padded to 60 bytes), without scapy."""
    raw = bytes.fromhex(dst.replace(":", "")) + bytes.fromhex(src.replace(":", "")) + ether_type.to_bytes(2, "big")
    frame = raw + payload
    return frame + bytes(max(0, 60 - len(frame)))
