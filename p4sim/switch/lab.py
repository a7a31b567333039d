"""Throw-away network namespaces around a switch, for the switch's tests and benchmark.

Host i lives in namespace `ethsw-TAG-hI` with interface `ethswTAGhI`; its veth peer
`ethswTAGsI` stays in the caller's namespace for the switch to bind as port I. IPv6 is
off on every interface so the kernel adds no traffic of its own (exact accounting).
Everything is removed by `destroy()` (also after a partial `create()`).
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

PREFIX = "ethsw"


def sh(*argv: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(argv, check=check, capture_output=True, text=True)


def _ipv6_off(iface: str, ns: str | None = None) -> None:
    cmd = ["sysctl", "-qw", f"net.ipv6.conf.{iface}.disable_ipv6=1"]
    sh(*(["ip", "netns", "exec", ns] if ns else []), *cmd, check=False)


@dataclass
class Lab:
    nhosts: int = 2
    tag: str = field(default_factory=lambda: secrets.token_hex(2))
    namespaces: list[str] = field(default_factory=list)
    created_links: list[str] = field(default_factory=list)

    def ns(self, i: int) -> str:
        return f"{PREFIX}-{self.tag}-h{i}"

    def host_if(self, i: int) -> str:
        return f"{PREFIX}{self.tag}h{i}"

    def sw_if(self, i: int) -> str:
        return f"{PREFIX}{self.tag}s{i}"

    def create(self) -> Lab:
        try:
            for i in range(1, self.nhosts + 1):
                ns, hif, sif = self.ns(i), self.host_if(i), self.sw_if(i)
                sh("ip", "netns", "add", ns)
                self.namespaces.append(ns)
                sh("ip", "link", "add", sif, "type", "veth", "peer", "name", hif)
                self.created_links.append(sif)
                _ipv6_off(sif)
                sh("ip", "link", "set", hif, "netns", ns)
                _ipv6_off(hif, ns)
                sh("ip", "netns", "exec", ns, "ip", "link", "set", hif, "up")
                sh("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up")
                sh("ip", "link", "set", sif, "up")
        except BaseException:
            self.destroy()
            raise
        return self

    def destroy(self) -> None:
        for link in self.created_links:
            sh("ip", "link", "del", link, check=False)
        for ns in self.namespaces:
            sh("ip", "netns", "del", ns, check=False)
        self.created_links.clear()
        self.namespaces.clear()

    def __enter__(self) -> Lab:
        return self.create()

    def __exit__(self, *exc: object) -> None:
        self.destroy()

    def in_ns(self, i: int, *argv: str) -> list[str]:
        return ["ip", "netns", "exec", self.ns(i), *argv]

    def python_in_ns(self, i: int, script: str | Path, *args: str) -> list[str]:
        return self.in_ns(i, sys.executable, str(script), *args)

    def switch_cmd(self, *extra: str) -> list[str]:
        """`python -m p4sim.switch` with one `-i` per host (port i = host i)."""
        ifs = [a for i in range(1, self.nhosts + 1) for a in ("-i", f"{i}@{self.sw_if(i)}")]
        return [sys.executable, "-m", "p4sim.switch", *ifs, *extra]


def switch_env() -> dict[str, str]:
    """Environment that lets a child find this checkout's p4sim."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env
