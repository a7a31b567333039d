"""The controller's client against BMv2's simple_switch_grpc, with the same test bodies as against p4exec
(test_client_switch.py): pipeline push, table writes and reads, direct and indexed counters, registers
(over the Thrift side channel: PI answers RegisterEntry with UNIMPLEMENTED), multicast, clone sessions,
packet-out/in, digests, arbitration and per-update error codes. The program is compiled by p4c-bm2-ss.
Queues are set over the Thrift session and change what arrives."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.artifacts import PipelineArtifacts, build_artifacts
from controller.bmv2 import Bmv2SideChannel
from controller.bmv2_thrift import Bmv2ThriftError, session_for
from controller.client import SwitchConnection
from p4exec.switch.lab import Lab, switch_env
from p4exec.switch.nsio import write_frames
from tests.controller.test_client_switch import (  # noqa: F401 (collected here, run against BMv2)
    MAC_B,
    test_arbitration_lower_election_id_cannot_write,
    test_clone_session,
    test_digest,
    test_forwarding_counters_and_registers,
    test_insert_read_modify_delete,
    test_multicast_group,
    test_packet_out_and_packet_in,
    test_write_errors_carry_per_update_codes,
)
from tests.support.bmv2 import Bmv2LabSwitch, needs_bmv2
from tests.support.controller import CLIENT_LAB, ether

pytestmark = [pytest.mark.netns, *needs_bmv2]


@pytest.fixture(scope="module")
def lab() -> Iterator[Lab]:
    assert os.geteuid() == 0, "the BMv2 switch tests need root (namespaces, raw sockets)"
    with Lab(nhosts=3) as lab:
        yield lab


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> PipelineArtifacts:
    return build_artifacts(CLIENT_LAB, "bmv2", build_dir=tmp_path_factory.mktemp("p4"))


@pytest.fixture(scope="module")
def switch(lab: Lab) -> Iterator[Bmv2LabSwitch]:
    sw = Bmv2LabSwitch(lab)
    yield sw
    sw.close()


@pytest.fixture
def conn(switch: Bmv2LabSwitch, artifacts: PipelineArtifacts) -> Iterator[SwitchConnection]:
    client = SwitchConnection(switch.addr, device_id=switch.device_id, p4info=artifacts.p4info, election_id=10,
                              timeout=30)
    client.bmv2 = Bmv2SideChannel(switch.thrift_port, name="bmv2-lab")
    client.connect()
    assert client.is_primary
    client.set_pipeline(artifacts.device_config)
    yield client
    client.close()


def test_artifacts_are_p4c_output(artifacts: PipelineArtifacts) -> None:
    assert artifacts.target == "bmv2" and artifacts.config_path.name == "client_lab.bmv2.json"
    assert b'"program"' in artifacts.device_config  # BMv2's JSON, pushed as it is


def _send_paced(lab: Lab, tmp: Path, host: int, frames: list[bytes], pps: int = 500) -> None:
    """Paced, because simple_switch_grpc's receive path loses frames of a full-speed burst before its
    ingress counters see them (measured: 32-53 of 60 counted at ingress)."""
    path = tmp / f"paced-h{host}.bin"
    write_frames(str(path), frames)
    subprocess.run(lab.nsio(host, "send", lab.host_if(host), str(path), "--rate", str(pps)), check=True,
                   capture_output=True, env=switch_env(), timeout=60)


def test_queue_rate_and_depth_over_thrift_limit_what_leaves(conn: SwitchConnection, lab: Lab, tmp_path: Path,
                                                           capture) -> None:
    """A 1 packet/s, 4-packet queue on port 2 lets 40 frames at 500/s through only partly; lifted, all pass."""
    conn.insert(conn.table_entry("l2", {"hdr.ethernet.dst": MAC_B}, "forward", {"port": 2}))
    frames = [ether(MAC_B, payload=bytes([i]) * 80) for i in range(40)]
    try:
        conn.set_queue(2, depth=4, rate_pps=1)
        cap = capture(2, count=40, seconds=2)
        _send_paced(lab, tmp_path, 1, frames)
        limited = cap.frames()
        assert 0 < len(limited) < 12, len(limited)
    finally:
        conn.set_queue(2, depth=64, rate_pps=10_000_000)  # BMv2's default depth; a rate nothing here reaches
    time.sleep(1.5)  # what the slow queue still held drains
    cap = capture(2, count=40, seconds=10)
    _send_paced(lab, tmp_path, 1, frames)
    assert cap.frames() == frames
    assert conn.read_counter("rx_count", 1)[1][0] == 80  # every frame reached the pipeline


def test_one_thrift_session_and_refusals_are_clear_errors(conn: SwitchConnection, switch: Bmv2LabSwitch) -> None:
    session = session_for(switch.thrift_port)
    before = session.connects
    for cell in range(16):
        conn.write_register("last_len", cell, cell * 3)
    assert conn.read_register("last_len") == {cell: cell * 3 for cell in range(16)}
    assert session.connects == before <= 1  # one connection, every call on it
    with pytest.raises(Bmv2ThriftError, match="index out of range"):
        conn.bmv2.register_write("LabIngress.last_len", 99, 1)  # type: ignore[union-attr]
    with pytest.raises(Bmv2ThriftError, match="no such register"):
        conn.bmv2.register_read("LabIngress.nope", 0)  # type: ignore[union-attr]
    assert conn.read_register("last_len", 5) == {5: 15}  # the session survives a refusal

