"""Helpers for the fabric controller tests: raw ETH+ frames from host namespaces, counters read back from
the switches, waiting for the controller's own events (all loops bounded)."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from controller.codec import decode
from controller.fabric import FabricController
from ethlab.bringup import RunningFabric
from p4exec.switch.lab import NSIO, switch_env
from p4exec.switch.nsio import write_frames

TX = "tx_port_counter"


def ethplus_frame(src_mac: str, dst_mac: str, src_eid: int, dst_eid: int, entropy: int, plane: int = 0) -> bytes:
    """An ETH+ data frame (docs/ethplus-header.md), padded to 64 bytes; ect 0 so nothing gets marked."""
    eth = bytes.fromhex(dst_mac.replace(":", "")) + bytes.fromhex(src_mac.replace(":", "")) + b"\x88\xb5"
    word0 = (1 << 30) | ((plane & 3) << 26) | (15 << 20) | ((dst_eid & 0x3FF) << 10) | (src_eid & 0x3FF)
    header = word0.to_bytes(4, "big") + (entropy & 0xFFFF).to_bytes(2, "big") + bytes(6)
    frame = eth + header + b"ethlab-test"
    return frame + bytes(max(0, 64 - len(frame)))


def flows(running: RunningFabric, src: str, dst: str, n: int, plane: int = 0) -> list[bytes]:
    """n frames from src to dst, each with its own entropy (so ECMP spreads them over the paths)."""
    topo = running.topo
    a, b = topo.endpoints[src], topo.endpoints[dst]
    return [ethplus_frame(a.interfaces[plane].mac, b.interfaces[plane].mac, a.eid, b.eid, 0x1000 + i, plane)
            for i in range(n)]


def send_from_host(running: RunningFabric, host: str, frames: list[bytes], tmp: Path, plane: int = 0) -> None:
    path = tmp / f"frames-{host}.bin"
    write_frames(str(path), frames)
    ifname = running.topo.endpoints[host].interfaces[plane].ifname
    cmd = ["ip", "netns", "exec", running.fabric.netns(host), sys.executable, str(NSIO), "send", ifname, str(path)]
    subprocess.run(cmd, check=True, capture_output=True, env=switch_env(), timeout=60)


def tx_packets(controller: FabricController, switch: str, port: int) -> int:
    return controller.connection(switch).read_counter(TX, port)[port][0]


def wait_for(predicate: Callable[[], bool], timeout: float, step: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


def wait_event(controller: FabricController, kind: str, after: float, timeout: float) -> bool:
    return wait_for(lambda: any(e.kind == kind and e.at >= after for e in controller.state.events), timeout)


def table_map(controller: FabricController, switch: str, table: str) -> dict[int, list[int]]:
    """Exact-keyed table read back from the switch: key -> action params (ints)."""
    conn = controller.connection(switch)
    return {decode(e.match[0].exact.value): [decode(p.value) for p in e.action.action.params]
            for e in conn.read_table(table)}
