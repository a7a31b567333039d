"""A kernel-bridge switch class used only by the Mininet tests: the same constructor and lifecycle as the
P4 switch classes, but forwarding by the Linux bridge, so the builder can be tested without a P4 target."""

from __future__ import annotations

import subprocess
from typing import Any

from topologies.switches import P4Switch


class BridgeSwitch(P4Switch):
    target = "bridge"
    routes_ipv4 = False  # forwards on the destination MAC: hosts must address their peers, found by ARP

    def __init__(self, name: str, **params: Any) -> None:
        P4Switch.__init__(self, name, **params)
        assert self.run is not None
        self.bridge = f"{self.run.prefix}b{self.device_id}"
        self.run.add_interfaces([self.bridge])

    def start(self, controllers: list[Any] | None = None) -> None:
        lines = [f"link add {self.bridge} type bridge", f"link set {self.bridge} up"]
        lines += [f"link set {ifname} master {self.bridge}" for ifname in self.port_map().values()]
        subprocess.run(["ip", "-batch", "-"], input="\n".join(lines) + "\n", check=True, capture_output=True,
                       text=True)

    def wait_ready(self, timeout: float = 30.0) -> None:
        pass

    def connected(self) -> bool:
        return True

    def stop_process(self, timeout: float = 5.0) -> None:
        subprocess.run(["ip", "link", "del", self.bridge], capture_output=True)
