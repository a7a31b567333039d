"""Throw-away network namespaces around a switch, for the switch's tests and benchmark.

Host i lives in namespace `ethsw-TAG-hI` with interface `ethswTAGhI`; its veth peer
`ethswTAGsI` stays in the caller's namespace for the switch to bind as port I. IPv6 is
off on every interface so the kernel adds no traffic of its own (exact accounting).
Everything is removed by `destroy()` (also after a partial `create()`).
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

PREFIX = "ethsw"
NSIO = Path(__file__).with_name("nsio.py")


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

    def nsio(self, i: int, *args: str) -> list[str]:
        """Command running the nsio frame helper in host i's namespace."""
        return self.python_in_ns(i, NSIO, *args)

    def switch_cmd(self, *extra: str) -> list[str]:
        """`python -m p4exec.switch` with one `-i` per host (port i = host i)."""
        ifs = [a for i in range(1, self.nhosts + 1) for a in ("-i", f"{i}@{self.sw_if(i)}")]
        return [sys.executable, "-m", "p4exec.switch", *ifs, *extra]


def switch_env() -> dict[str, str]:
    """Environment that lets a child find this checkout's p4exec."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def rss_kb(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) in kB of any process, from /proc."""
    vals = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            vals[key] = int(rest.split()[0])
    return vals.get("VmRSS", 0), vals.get("VmHWM", 0)


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds a process (all its threads) has used so far, from /proc."""
    return sum(cpu_split(pid))


def cpu_split(pid: int) -> tuple[float, float]:
    """(user, system) CPU seconds a process (all its threads) has used so far, from /proc. System time includes
    the kernel's packet work that ran in the process's context (its sends, and softirqs it happened to host)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tck = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tck, int(fields[12]) / tck


class SwitchProcess:
    """A `p4exec switch` child process with its stderr in a file (so it can never block on a pipe)."""

    def __init__(self, cmd: list[str]) -> None:
        self.log = tempfile.NamedTemporaryFile(prefix="ethsw-log-", suffix=".txt", delete=False)  # noqa: SIM115
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=self.log, env=switch_env())

    @property
    def pid(self) -> int:
        return self.proc.pid

    def output(self) -> str:
        return Path(self.log.name).read_text(errors="replace")

    def wait_ready(self, timeout: float = 30.0) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if "p4exec switch ready" in self.output():
                return
            if self.proc.poll() is not None:
                raise RuntimeError(f"switch exited with {self.proc.returncode}:\n{self.output()}")
            time.sleep(0.05)
        raise TimeoutError(f"switch not ready after {timeout} s:\n{self.output()}")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def rss_kb(self) -> tuple[int, int]:
        return rss_kb(self.proc.pid)

    def signal(self, sig: int) -> None:
        if self.alive():
            self.proc.send_signal(sig)

    def stop(self, timeout: float = 5.0) -> float:
        """SIGTERM and wait; returns the seconds it took (kills after `timeout`)."""
        t0 = time.monotonic()
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return time.monotonic() - t0

    def close(self) -> None:
        self.stop()
        self.log.close()
        try:
            os.unlink(self.log.name)
        except OSError:
            pass
