"""Helpers shared by the switch tests (fixtures are in tests/switch/conftest.py)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

from p4exec.switch.lab import Lab, SwitchProcess, switch_env
from p4exec.switch.nsio import read_frames, write_frames

ROOT = Path(__file__).resolve().parents[2]
BASIC_L3 = ROOT / "p4src" / "basic_l3.p4"
QUEUE_PROBE = ROOT / "tests" / "switch" / "p4" / "queue_probe.p4"
FLOOD_CPU = ROOT / "tests" / "switch" / "p4" / "flood_cpu.p4"
ATOMIC_FLIP = ROOT / "tests" / "switch" / "p4" / "atomic_flip.p4"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]

def send_frames(lab: Lab, tmp: Path, host: int, frames: list[bytes]) -> None:
    """Send frames from a host's namespace, back to back."""
    path = tmp / f"frames-{host}.bin"
    write_frames(str(path), frames)
    subprocess.run(lab.nsio(host, "send", lab.host_if(host), str(path)), check=True, capture_output=True,
                   env=switch_env())


class Switch:
    """A running `p4exec switch` bound to the lab's ports, with its gRPC address and stats file."""

    def __init__(self, lab: Lab, tmp: Path, *extra: str, grpc: bool = True) -> None:
        self.lab = lab
        self.addr = f"127.0.0.1:{free_port()}"
        self.stats_path = tmp / "stats.json"
        args = ["--device-id", "1", "--stats-file", str(self.stats_path), "--log-console", *extra]
        args += ["--grpc-server-addr", self.addr, "--grpc-allow-local-users"] if grpc else ["--no-grpc"]
        self.proc = SwitchProcess(lab.switch_cmd(*args))
        self.proc.wait_ready()

    def connect(self, p4info):
        from controller.client import SwitchConnection

        conn = SwitchConnection(self.addr, device_id=1, p4info=p4info, timeout=30.0)
        conn.connect()
        return conn

    def stop(self) -> bool:
        """SIGTERM; True when the switch left by itself with status 0 (not killed at stop()'s 5 s bound).
        No tighter time limit: on a loaded machine a clean exit may take a few seconds."""
        self.proc.stop()
        return self.proc.proc.returncode == 0

    def stats(self) -> dict:
        return json.loads(self.stats_path.read_text())


class Capture:
    """Frames arriving at a host's interface, captured by nsio in its namespace."""

    def __init__(self, lab: Lab, host: int, tmp: Path, count: int, max_seconds: float, idle: float = 0.5) -> None:
        self.path = tmp / f"rx-h{host}-{count}.bin"
        cmd = lab.nsio(host, "recv", lab.host_if(host), str(self.path), "--max-seconds", str(max_seconds),
                       "--count", str(count), "--idle", str(idle))
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=switch_env())
        assert self.proc.stdout is not None and self.proc.stdout.readline().strip() == "ready"

    def result(self, timeout: float = 60.0) -> tuple[list[bytes], float]:
        """(frames, seconds between the first and the last)."""
        out, _ = self.proc.communicate(timeout=timeout)
        return read_frames(str(self.path)), float(out.split()[2])


def compiled(path: Path):
    """(p4info, device config bytes) of a program, compiled in this process as the controller would."""
    from p4exec.device.program import load_program

    config = path.read_bytes()
    return load_program(config).p4info, config


def table_entry(conn, table: str, match: dict, action: str, params: dict):
    """An exact/LPM TableEntry built from the P4Info (independent of the controller's entry builder)."""
    import ipaddress

    from p4.v1 import p4runtime_pb2 as pb

    p4info = conn.index.p4info
    tbl = next(t for t in p4info.tables if t.preamble.name == table)
    act = next(a for a in p4info.actions if a.preamble.name == action)
    entry = pb.TableEntry(table_id=tbl.preamble.id)
    for mf in tbl.match_fields:
        if mf.name not in match:
            continue
        value = match[mf.name]
        fm = entry.match.add(field_id=mf.id)
        nbytes = (mf.bitwidth + 7) // 8
        if isinstance(value, str):  # "a.b.c.d/len"
            net = ipaddress.ip_network(value)
            fm.lpm.value = int(net.network_address).to_bytes(nbytes, "big")
            fm.lpm.prefix_len = net.prefixlen
        else:
            fm.exact.value = int(value).to_bytes(nbytes, "big")
    entry.action.action.action_id = act.preamble.id
    for p in act.params:
        v = params[p.name]
        if isinstance(v, str):  # MAC
            v = int(v.replace(":", ""), 16)
        entry.action.action.params.add(param_id=p.id, value=int(v).to_bytes((p.bitwidth + 7) // 8, "big"))
    return entry


def queue_cmd(sw, *args: str) -> str:
    cmd = [sys.executable, "-m", "p4exec.switch.queue_cmd", "--grpc-server-addr", sw.addr, "--device-id", "1", *args]
    out = subprocess.run(cmd, capture_output=True, text=True, env=switch_env(), timeout=30)
    assert out.returncode == 0, out.stderr
    return out.stdout
