"""The switch's link-event socket: carrier changes, new and deleted links arrive; the flood of
promiscuous-mode changes that starting many switches causes is dropped in the kernel."""

from __future__ import annotations

import secrets
import subprocess
import threading
import time

import pytest

from p4exec.switch.linkmon import LinkEvent, LinkMonitor
from topologies.netns import entered, named

pytestmark = pytest.mark.netns


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


def collect(mon: LinkMonitor, settle_s: float = 0.3) -> list[LinkEvent]:
    time.sleep(settle_s)
    return mon.read()


def test_promiscuous_changes_filtered_carrier_and_deletes_kept() -> None:
    ns = f"ethsw-lm{secrets.token_hex(3)}"
    ip("netns", "add", ns)
    try:
        ip("-n", ns, "link", "add", "lma", "type", "veth", "peer", "name", "lmb")
        ip("-n", ns, "link", "set", "lma", "up")
        box: list[LinkMonitor] = []

        def make() -> None:  # the monitor's socket belongs to the namespace it was made in
            with entered(named(ns)):
                box.append(LinkMonitor())

        t = threading.Thread(target=make)
        t.start()
        t.join()
        mon = box[0]
        try:
            ip("-n", ns, "link", "set", "lma", "promisc", "on")
            ip("-n", ns, "link", "set", "lma", "promisc", "off")
            ip("-n", ns, "link", "set", "lma", "allmulticast", "on")
            assert collect(mon) == []
            ip("-n", ns, "link", "set", "lmb", "up")  # carrier on lma
            events = collect(mon)
            assert any(e.name == "lma" and e.up for e in events)
            ip("-n", ns, "link", "set", "lmb", "down")  # carrier lost on lma
            events = collect(mon)
            assert any(e.name == "lma" and not e.up and not e.deleted for e in events)
            ip("-n", ns, "link", "add", "lmc", "type", "veth", "peer", "name", "lmd")
            assert any(e.name == "lmc" and not e.deleted for e in collect(mon))
            ip("-n", ns, "link", "del", "lmc")
            assert any(e.name == "lmc" and e.deleted for e in collect(mon))
        finally:
            mon.close()
    finally:
        ip("netns", "del", ns)
