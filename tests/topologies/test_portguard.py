"""Issue 15 item 4: BMv2's Thrift port (bound to 0.0.0.0 by BMv2) must not be reachable from another host, nor
by a local non-root user. Checked with a real listener on 0.0.0.0 standing in for BMv2 (which binds the same
way), a real namespace playing the other host, and the unprivileged user nobody; and with BMv2 itself when it
is installed."""

from __future__ import annotations

import secrets
import shutil
import socket
import subprocess
import threading
import time

import pytest

from tests.topologies.test_security import as_nobody
from topologies import build
from topologies.mininet_builder import Fabric, FabricOptions
from topologies.portguard import guard_ports, table_name, unguard
from topologies.switches import Bmv2Switch

pytestmark = pytest.mark.netns


class Listener:
    """A TCP server on 0.0.0.0:port that accepts and closes, as BMv2's Thrift server listens."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("0.0.0.0", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.sock.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
                conn.close()
            except OSError:
                continue

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.sock.close()


@pytest.fixture
def other_host():
    """A namespace linked to the root namespace by a veth pair: (netns name, root-side address)."""
    tag = secrets.token_hex(2)
    ns, root_if, ns_if = f"elpg{tag}", f"elpg{tag}a", f"elpg{tag}b"
    octet = 1 + secrets.randbelow(250)
    root_ip, ns_ip = f"10.253.{octet}.1", f"10.253.{octet}.2"
    cmds = [["ip", "netns", "add", ns], ["ip", "link", "add", root_if, "type", "veth", "peer", "name", ns_if],
            ["ip", "link", "set", ns_if, "netns", ns], ["ip", "addr", "add", f"{root_ip}/30", "dev", root_if],
            ["ip", "link", "set", root_if, "up"], ["ip", "-n", ns, "addr", "add", f"{ns_ip}/30", "dev", ns_if],
            ["ip", "-n", ns, "link", "set", ns_if, "up"], ["ip", "-n", ns, "link", "set", "lo", "up"]]
    try:
        for c in cmds:
            subprocess.run(c, check=True, capture_output=True)
        yield ns, root_ip
    finally:
        subprocess.run(["ip", "link", "del", root_if], capture_output=True)
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def reachable_from(ns: str, ip: str, port: int) -> bool:
    code = (f"import socket; s = socket.socket(); s.settimeout(1.5)\n"
            f"try:\n s.connect(({ip!r}, {port})); print('open')\nexcept OSError as e:\n print('closed', e)\n")
    out = subprocess.run(["ip", "netns", "exec", ns, "/usr/bin/python3", "-c", code], capture_output=True,
                         text=True, timeout=30).stdout
    return out.startswith("open")


def reachable_by_nobody(port: int) -> bool:
    r = as_nobody(f"import socket; s = socket.create_connection(('127.0.0.1', {port}), timeout=2); print('open')")
    return r.stdout.startswith("open")


def reachable_by_root(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return True
    except OSError:
        return False


def test_guarded_port_is_for_root_on_this_machine_only(other_host) -> None:
    ns, root_ip = other_host
    srv = Listener()
    table = table_name("t" + secrets.token_hex(2))
    try:
        # without the guard, what BMv2 does today: everyone gets in
        assert reachable_from(ns, root_ip, srv.port) and reachable_by_nobody(srv.port)
        guard_ports(table, [srv.port])
        assert not reachable_from(ns, root_ip, srv.port)
        assert not reachable_by_nobody(srv.port)
        assert reachable_by_root(srv.port)
    finally:
        unguard(table)
        srv.close()


def test_bmv2_fabric_guards_thrift_and_grpc_and_cleanup_removes_the_rules() -> None:
    f = Fabric(build("line", n=1), FabricOptions(switch_cls=Bmv2Switch))
    with f:  # built, not started: the rules exist before any BMv2 process could listen
        sw = f.switch("s1")
        listed = subprocess.run(["nft", "list", "table", "inet", f.run.nft_table], capture_output=True,
                                text=True).stdout
        assert str(sw.thrift_port) in listed and str(sw.grpc_port) in listed
    gone = subprocess.run(["nft", "list", "table", "inet", f.run.nft_table], capture_output=True, text=True)
    assert gone.returncode != 0


@pytest.mark.skipif(shutil.which("simple_switch_grpc") is None, reason="BMv2 (simple_switch_grpc) not on PATH")
def test_running_bmv2_thrift_is_not_reachable_from_another_host(other_host) -> None:
    ns, root_ip = other_host
    with Fabric(build("line", n=1), FabricOptions(switch_cls=Bmv2Switch)) as f:
        f.start()
        sw = f.switch("s1")
        deadline = time.monotonic() + 30
        while not reachable_by_root(sw.thrift_port):
            assert time.monotonic() < deadline, "BMv2 Thrift port never opened"
            time.sleep(0.2)
        assert not reachable_from(ns, root_ip, sw.thrift_port)
        assert not reachable_by_nobody(sw.thrift_port) and not reachable_by_nobody(sw.grpc_port)
