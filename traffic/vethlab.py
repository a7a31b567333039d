"""A switchless testbed: host namespaces joined by veth pairs, through a Linux bridge in its own namespace.

Used by the engine's tests and the benchmark, and handy for trying a schedule without a fabric. Every name
starts with the caller's prefix, and `down()` removes exactly what `up()` created.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from traffic.engine import NicAddress
from traffic.netns import sh


@dataclass
class VethLab:
    prefix: str  # e.g. "ethtr-1a2b-": keep it <= 10 characters, interface names are limited to 15
    hosts: int
    bridge: bool = True  # False: exactly two hosts on one veth pair
    namespaces: list[str] = field(default_factory=list)

    def host_ns(self, i: int) -> str:
        return f"{self.prefix}h{i}"

    @property
    def bridge_ns(self) -> str:
        return f"{self.prefix}br"

    def bridge_port(self, i: int) -> str:
        """The bridge-side interface of host i (its egress is the host's downlink)."""
        return f"{self.prefix}b{i}"

    @staticmethod
    def mac(i: int) -> str:
        return f"02:e7:00:00:{i >> 8 & 0xFF:02x}:{i & 0xFF:02x}"

    @staticmethod
    def ip(i: int) -> str:
        return f"10.77.{i >> 8 & 0xFF}.{i & 0xFF}"

    def _add_ns(self, name: str) -> None:
        sh("ip", "netns", "add", name)
        self.namespaces.append(name)
        sh("ip", "netns", "exec", name, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
        sh("ip", "netns", "exec", name, "sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1")
        sh("ip", "-n", name, "link", "set", "lo", "up")

    def up(self) -> dict[tuple[int, int], NicAddress]:
        """Create everything; on failure remove what was made and re-raise. Returns the endpoint ports."""
        if not self.bridge and self.hosts != 2:
            raise ValueError("without a bridge the lab has exactly two hosts")
        try:
            for i in range(self.hosts):
                self._add_ns(self.host_ns(i))
            if self.bridge:
                self._add_ns(self.bridge_ns)
                sh("ip", "-n", self.bridge_ns, "link", "add", "br0", "type", "bridge")
                sh("ip", "-n", self.bridge_ns, "link", "set", "br0", "up")
                for i in range(self.hosts):
                    self._wire(self.host_ns(i), f"{self.prefix}h{i}", self.bridge_ns, self.bridge_port(i), i)
                    sh("ip", "-n", self.bridge_ns, "link", "set", self.bridge_port(i), "master", "br0")
            else:
                self._wire(self.host_ns(0), f"{self.prefix}h0", self.host_ns(1), f"{self.prefix}h1", 0, 1)
            self._wait_up()
        except BaseException:
            self.down()
            raise
        return {(i, 0): NicAddress(self.host_ns(i), "eth0", self.mac(i), self.ip(i)) for i in range(self.hosts)}

    def _wait_up(self, timeout_s: float = 3.0) -> None:
        """Wait (bounded) until every host's eth0 reports carrier: frames sent earlier would be dropped."""
        deadline = time.monotonic() + timeout_s
        pending = [self.host_ns(i) for i in range(self.hosts)]
        while pending:
            pending = [ns for ns in pending
                       if "state UP" not in sh("ip", "-n", ns, "-o", "link", "show", "eth0").stdout]
            if pending and time.monotonic() > deadline:
                raise RuntimeError(f"veth lab: eth0 not up in {', '.join(pending)}")
            if pending:
                time.sleep(0.01)

    def _wire(self, ns_a: str, tmp_a: str, ns_b: str, name_b: str, i: int, j: int | None = None) -> None:
        """veth pair: end a becomes eth0 in ns_a (MAC of host i), end b goes to ns_b (eth0 too if j)."""
        tmp_b = name_b if j is None else f"{self.prefix}x{j}"
        sh("ip", "link", "add", "name", tmp_a, "type", "veth", "peer", "name", tmp_b)
        sh("ip", "link", "set", tmp_a, "netns", ns_a)
        sh("ip", "link", "set", tmp_b, "netns", ns_b)
        sh("ip", "-n", ns_a, "link", "set", tmp_a, "name", "eth0", "address", self.mac(i), "up")
        if j is None:
            sh("ip", "-n", ns_b, "link", "set", tmp_b, "up")
        else:
            sh("ip", "-n", ns_b, "link", "set", tmp_b, "name", "eth0", "address", self.mac(j), "up")

    def shape(self, host: int, rate: str, burst: str = "16kb", limit: str = "32kb") -> None:
        """Rate-limit the bridge's port towards `host` with tbf (tail drop beyond `limit` bytes queued)."""
        if not self.bridge:
            raise ValueError("shape() needs the bridge")
        sh("ip", "netns", "exec", self.bridge_ns, "tc", "qdisc", "replace", "dev", self.bridge_port(host),
           "root", "tbf", "rate", rate, "burst", burst, "limit", limit)

    def down(self) -> None:
        """Delete our namespaces (their veths go with them) and any root-side veth left half-made."""
        for name in reversed(self.namespaces):
            sh("ip", "netns", "del", name, check=False)
        self.namespaces.clear()
        for i in range(self.hosts):
            for dev in (f"{self.prefix}h{i}", f"{self.prefix}b{i}", f"{self.prefix}x{i}"):
                if sh("ip", "link", "show", dev, check=False).returncode == 0:
                    sh("ip", "link", "del", dev, check=False)

    def __enter__(self) -> VethLab:
        return self

    def __exit__(self, *exc) -> None:
        self.down()
