"""BMv2 after a veth flap (controller/bmv2_ports.py): simple_switch_grpc with three ports in project-created
namespaces forwards; one switch-side veth goes down and up again. While it is down BMv2 takes no frame on ANY
port; after it is up it stays deaf until a frame arrives on that port: one wake frame into the link and
forwarding resumes within a bounded time. A flapped port that traffic arrives on recovers by itself. The
BMv2 Target fails a link without setting its interface down (its other ports keep forwarding through the
outage), and restoring a link wakes a switch end that was set down meanwhile."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.artifacts import build_artifacts
from controller.bmv2 import Bmv2SideChannel
from controller.bmv2_ports import wake_link
from controller.client import SwitchConnection
from controller.targets import BMV2
from p4exec.switch.lab import Lab, sh
from tests.support.bmv2 import Bmv2LabSwitch, needs_bmv2
from tests.support.controller import CLIENT_LAB, Capture, ether, send_frames

pytestmark = [pytest.mark.netns, *needs_bmv2]

MAC = {2: "02:00:00:00:0b:0b", 3: "02:00:00:00:0c:0c"}
RESUME_WITHIN_S = 10.0  # generous on a shared machine; without the wake frame it never resumes


@pytest.fixture
def lab() -> Iterator[Lab]:
    assert os.geteuid() == 0, "the BMv2 flap test needs root (namespaces, raw sockets)"
    with Lab(nhosts=3) as lab:
        yield lab


@pytest.fixture
def conn(lab: Lab, tmp_path: Path) -> Iterator[SwitchConnection]:
    artifacts = build_artifacts(CLIENT_LAB, "bmv2", build_dir=tmp_path / "p4")
    switch = Bmv2LabSwitch(lab)
    client = SwitchConnection(switch.addr, device_id=switch.device_id, p4info=artifacts.p4info, election_id=10,
                              timeout=30)
    client.bmv2 = Bmv2SideChannel(switch.thrift_port, name="bmv2-flap")
    try:
        client.connect()
        client.set_pipeline(artifacts.device_config)
        for port, mac in MAC.items():
            client.insert(client.table_entry("l2", {"hdr.ethernet.dst": mac}, "forward", {"port": port}))
        yield client
    finally:
        client.close()
        switch.close()


class Probe:
    """One frame from host 1 to host `to`, captured there; every frame distinct."""

    def __init__(self, lab: Lab, tmp: Path) -> None:
        self.lab, self.tmp, self.sent = lab, tmp, 0

    def passes(self, to: int, seconds: float = 1.0) -> bool:
        self.sent += 1
        cap = Capture(self.lab, self.tmp, to, count=1, seconds=seconds)
        try:
            frame = ether(MAC[to], payload=self.sent.to_bytes(4, "big") * 20)
            send_frames(self.lab, self.tmp, 1, [frame])
            return frame in cap.frames()
        finally:
            cap.kill()

    def resumes(self, to: int) -> float | None:
        """Seconds until a frame passes again, None if none did within RESUME_WITHIN_S."""
        start = time.monotonic()
        while time.monotonic() - start < RESUME_WITHIN_S:
            if self.passes(to):
                return time.monotonic() - start
        return None


def _rx(conn: SwitchConnection, port: int) -> int:
    return conn.read_counter("rx_count", port).get(port, (0, 0))[0]


@pytest.mark.timeout(300)
def test_deaf_after_a_flap_until_the_target_wakes_the_link(conn: SwitchConnection, lab: Lab, tmp_path: Path) -> None:
    probe = Probe(lab, tmp_path)
    assert probe.passes(2) and probe.passes(3), "no forwarding before the flap"
    flapped = lab.sw_if(2)
    sh("ip", "link", "set", flapped, "down")
    try:
        # BMv2's one receive thread waits in libpcap for the downed port: the other ports starve too
        assert not probe.passes(3), "BMv2 forwarded between two healthy ports while a third was down"
    finally:
        sh("ip", "link", "set", flapped, "up")
    rx_before = _rx(conn, 1)
    assert not probe.passes(2) and not probe.passes(3), "BMv2 received again without a frame on the flapped port"
    assert _rx(conn, 1) == rx_before  # the frames reached the veth, never the pipeline
    wake_link([(None, flapped), (lab.ns(2), lab.host_if(2))])
    took = probe.resumes(2)
    assert took is not None, f"BMv2 forwarded nothing in the {RESUME_WITHIN_S:g} s after the wake frame"
    assert probe.passes(3)
    assert _rx(conn, 2) >= 1  # the wake frame came in on the flapped port (client_lab drops it: no l2 entry)


@pytest.mark.timeout(300)
def test_a_flapped_port_that_receives_traffic_recovers_by_itself(conn: SwitchConnection, lab: Lab,
                                                                 tmp_path: Path) -> None:
    probe = Probe(lab, tmp_path)
    assert probe.passes(2), "no forwarding before the flap"
    sh("ip", "link", "set", lab.sw_if(1), "down")
    time.sleep(0.3)
    sh("ip", "link", "set", lab.sw_if(1), "up")
    assert probe.resumes(2) is not None, "host 1's own frames did not get BMv2 receiving on its port again"


def _host_rx(lab: Lab, host: int) -> int:
    path = f"/sys/class/net/{lab.host_if(host)}/statistics/rx_packets"
    return int(sh(*lab.in_ns(host, "cat", path)).stdout)


def _port2_link(lab: Lab) -> list[tuple[str | None, str]]:
    return [(None, lab.sw_if(2)), (lab.ns(2), lab.host_if(2))]


@pytest.mark.timeout(300)
def test_the_bmv2_target_fails_a_link_without_deafening_the_switch(conn: SwitchConnection, lab: Lab,
                                                                   tmp_path: Path) -> None:
    assert BMV2.link_state is not None
    probe = Probe(lab, tmp_path)
    assert probe.passes(2), "no forwarding before the failure"
    BMV2.link_state(_port2_link(lab), False)
    try:
        before = _host_rx(lab, 2)
        send_frames(lab, tmp_path, 1, [ether(MAC[2], payload=b"into the failed link")])
        assert probe.passes(3), "the other ports stopped forwarding while one link was failed"
        assert _host_rx(lab, 2) == before, "a frame crossed the failed link"
        assert _rx(conn, 1) >= 3  # the pipeline took the frame for port 2 too: the cut is on the wire
    finally:
        BMV2.link_state(_port2_link(lab), True)
    assert probe.resumes(2) is not None, "the restored link does not forward"


@pytest.mark.timeout(300)
def test_restoring_a_link_wakes_a_switch_end_that_was_set_down(conn: SwitchConnection, lab: Lab,
                                                               tmp_path: Path) -> None:
    assert BMV2.link_state is not None
    probe = Probe(lab, tmp_path)
    assert probe.passes(2), "no forwarding before the flap"
    sh("ip", "link", "set", lab.sw_if(2), "down")  # by someone else, e.g. an operator
    BMV2.link_state(_port2_link(lab), True)
    assert probe.resumes(3) is not None and probe.passes(2), "the restored link left BMv2 deaf"
