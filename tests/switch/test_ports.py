"""AF_PACKET ports: frames arrive as sent (VLAN tags too), own transmissions are not read back, link state."""

from __future__ import annotations

import subprocess
import time

import pytest
from scapy.all import IP, UDP, Dot1Q, Ether

from p4exec.switch.lab import sh
from p4exec.switch.nsio import write_frames
from p4exec.switch.ports import SocketPort, link_state

pytestmark = pytest.mark.netns


def recv_all(port: SocketPort, want: int, timeout: float = 2.0) -> list[bytes]:
    got: list[bytes] = []
    end = time.monotonic() + timeout
    while len(got) < want and time.monotonic() < end:
        got += port.recv_batch(64)
        time.sleep(0.01)
    return got


def test_frames_arrive_as_sent_and_own_frames_are_ignored(lab, tmp_path) -> None:
    frames = [
        bytes(Ether(dst="00:00:00:00:00:02") / Dot1Q(vlan=42, prio=5) / IP() / UDP()),
        bytes(Ether(dst="00:00:00:00:00:02") / Dot1Q(vlan=0) / IP() / UDP()),  # priority-tagged
        bytes(Ether(dst="00:00:00:00:00:03", type=0x88B5) / (b"z" * 1486)),  # full-size frame
    ]
    path = tmp_path / "f.bin"
    write_frames(str(path), frames)
    port = SocketPort(1, lab.sw_if(1))
    port.open()
    try:
        assert port.up and link_state(lab.sw_if(1)) == "up"
        subprocess.run(lab.nsio(1, "send", lab.host_if(1), str(path)), check=True, capture_output=True)
        assert recv_all(port, 3) == frames
        assert port.send(frames[0])  # goes out towards host 1 ...
        time.sleep(0.1)
        assert port.recv_batch(64) == []  # ... and is not read back as received
    finally:
        port.close()


def test_link_state_and_vanishing_interface(lab) -> None:
    port = SocketPort(2, lab.sw_if(2))
    port.open()
    try:
        sh("ip", "netns", "exec", lab.ns(2), "ip", "link", "set", lab.host_if(2), "down")
        assert link_state(lab.sw_if(2)) == "down"
        sh("ip", "link", "del", lab.sw_if(2))
        lab.created_links.remove(lab.sw_if(2))
        assert link_state(lab.sw_if(2)) == "gone"
        assert port.send(b"\x00" * 60) is False  # refused, not raised: the loop counts a tx_error
    finally:
        port.close()


def test_link_monitor_reports_carrier_and_deletion(lab) -> None:
    from p4exec.switch.linkmon import LinkMonitor

    mon = LinkMonitor()
    try:
        sh("ip", "netns", "exec", lab.ns(1), "ip", "link", "set", lab.host_if(1), "down")
        time.sleep(0.1)
        ours = [e for e in mon.read() if e.name == lab.sw_if(1)]
        assert ours and ours[-1].up is False and not ours[-1].deleted
        sh("ip", "link", "del", lab.sw_if(1))
        lab.created_links.remove(lab.sw_if(1))
        time.sleep(0.1)
        ours = [e for e in mon.read() if e.name == lab.sw_if(1)]
        assert ours and ours[-1].deleted
    finally:
        mon.close()
