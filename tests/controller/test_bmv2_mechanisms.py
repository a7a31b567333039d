"""Which mechanism the controller uses per target, checked without BMv2.

BMv2's P4Runtime server (p4lang/PI DeviceMgr) answers RegisterEntry reads and writes with UNIMPLEMENTED and
has no ExternEntry support, so on BMv2 registers and queues go to `simple_switch_CLI --thrift-port N`.
simple_switch_CLI is not installable here: a stand-in on PATH records the commands it reads on stdin and
answers `register_read` the way runtime_CLI prints (`name[i]= v`, `name= v0, v1, ...`). The p4exec path is
not faked anywhere: it is what every other controller test runs against a real switch."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
from p4.v1 import p4runtime_pb2 as pb

from controller.artifacts import PipelineArtifacts, build_artifacts
from controller.bmv2 import Bmv2Cli, Bmv2CliError, queue_commands
from controller.client import SwitchConnection
from controller.errors import ControllerError
from controller.fabric import FabricController
from controller.policies import make_policy
from tests.support.controller import install_fake_tool
from topologies import load

FAKE_CLI = """#!/bin/sh
[ "$1" = "--thrift-port" ] || { echo "usage: simple_switch_CLI --thrift-port N" >&2; exit 2; }
echo "port $2" >> "$FAKE_CLI_LOG"
while read -r cmd name index rest; do
  echo "$cmd $name $index $rest" | sed 's/ *$//' >> "$FAKE_CLI_LOG"
  case "$cmd" in
    register_read) if [ -n "$index" ]; then echo "RuntimeCmd: $name[$index]= 1"; \
                   else echo "register index omitted, reading entire array" >&2; echo "RuntimeCmd: $name= 0, 1, 0, 1"; fi;;
    bogus) echo "*** Unknown syntax: bogus";;
  esac
done
"""


@pytest.fixture(scope="module")
def p4exec_artifacts(tmp_path_factory: pytest.TempPathFactory) -> PipelineArtifacts:
    return build_artifacts(build_dir=tmp_path_factory.mktemp("p4"))


@pytest.fixture
def fake_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    install_fake_tool(tmp_path, monkeypatch, "simple_switch_CLI", FAKE_CLI)
    log = tmp_path / "cli.log"
    monkeypatch.setenv("FAKE_CLI_LOG", str(log))
    return log


@pytest.fixture
def bmv2_conn(p4exec_artifacts: PipelineArtifacts) -> SwitchConnection:
    """A session that is never connected: register and queue operations must not touch gRPC on BMv2."""
    conn = SwitchConnection("127.0.0.1:1", device_id=1, p4info=p4exec_artifacts.p4info, name="s1")
    conn.bmv2 = Bmv2Cli(50123, name="s1")
    return conn


def test_register_writes_and_reads_go_over_thrift(bmv2_conn: SwitchConnection, fake_cli: Path) -> None:
    bmv2_conn.write_register("port_down", 3, 1)
    assert bmv2_conn.read_register("port_down", 3) == {3: 1}
    assert bmv2_conn.read_register("port_down") == {0: 0, 1: 1, 2: 0, 3: 1}
    reg = bmv2_conn.index.get("registers", "port_down")
    wildcard = pb.RegisterEntry(register_id=reg.preamble.id)  # type: ignore[attr-defined]
    wildcard.data.bitstring = b"\x00"
    assert bmv2_conn.modify(wildcard) == 1  # what the experiment runner does to clear a register
    assert fake_cli.read_text().splitlines() == [
        "port 50123", "register_write port_down 3 1",
        "port 50123", "register_read port_down 3",
        "port 50123", "register_read port_down",
        "port 50123", "register_reset port_down"]


def test_queues_over_thrift_and_no_port_status(bmv2_conn: SwitchConnection, fake_cli: Path) -> None:
    bmv2_conn.set_queue(2, rate_pps=833.3, depth=64)
    assert fake_cli.read_text().splitlines() == ["port 50123", "set_queue_depth 64 2", "set_queue_rate 833 2"]
    with pytest.raises(ControllerError, match="no port status") as info:
        bmv2_conn.port_status()
    assert info.value.code == grpc.StatusCode.UNIMPLEMENTED
    with pytest.raises(ControllerError, match="packet rates only"):
        bmv2_conn.set_queue(2, rate_bps=1e9)


def test_cli_refusals_and_absence_are_errors(bmv2_conn: SwitchConnection, fake_cli: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(Bmv2CliError, match="Unknown syntax: bogus"):
        bmv2_conn.bmv2.run(["bogus"])  # type: ignore[union-attr]
    assert "error= 0, 1" in bmv2_conn.bmv2.run(["register_read MyEgress.error"])  # type: ignore[union-attr]
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(Bmv2CliError, match="simple_switch_CLI not found"):
        bmv2_conn.write_register("port_down", 1, 1)
    no_port = Bmv2Cli(None, name="s9")
    with pytest.raises(Bmv2CliError, match="s9: .*Thrift port"):
        no_port.run(["register_reset port_down"])


def test_queue_command_units() -> None:
    assert queue_commands(0, depth=64) == ["set_queue_depth 64"]  # every port
    assert queue_commands(5, rate_pps=0.4) == ["set_queue_rate 1 5"]  # a rate, never 0 (= unlimited)
    assert queue_commands(5, rate_pps=0) == ["set_queue_rate 0 5"]


def _controller(artifacts: PipelineArtifacts, target: str, **options: object) -> FabricController:
    art = PipelineArtifacts(artifacts.program, target, artifacts.p4info, artifacts.device_config,
                            artifacts.p4info_path, artifacts.config_path)
    topo = load("leafspine")
    addresses = {sw.name: f"127.0.0.1:{50100 + i}" for i, sw in enumerate(topo.switches)}
    return FabricController(topo, addresses, art, make_policy("ecmp"), **options)  # type: ignore[arg-type]


def test_controller_picks_the_mechanism_per_target(p4exec_artifacts: PipelineArtifacts) -> None:
    p4exec = _controller(p4exec_artifacts, "p4exec")
    assert p4exec.new_connection("leaf1").bmv2 is None
    bmv2 = _controller(p4exec_artifacts, "bmv2", thrift_ports={"leaf1": 51100})
    conn = bmv2.new_connection("leaf1")
    assert conn.bmv2 is not None and conn.bmv2.thrift_port == 51100
    assert bmv2.new_connection("leaf2").bmv2.thrift_port is None  # type: ignore[union-attr]


def test_link_liveness_on_bmv2_uses_register_write(p4exec_artifacts: PipelineArtifacts, fake_cli: Path) -> None:
    ctl = _controller(p4exec_artifacts, "bmv2", thrift_ports={"leaf1": 51100})
    ctl.state.connections["leaf1"] = ctl.new_connection("leaf1")
    ctl.set_port_liveness("leaf1", 3, up=False)
    ctl.set_port_liveness("leaf1", 3, up=True)
    assert fake_cli.read_text().splitlines() == ["port 51100", "register_write port_down 3 1",
                                                 "port 51100", "register_write port_down 3 0"]


def test_no_port_monitor_on_bmv2(p4exec_artifacts: PipelineArtifacts) -> None:
    ctl = _controller(p4exec_artifacts, "bmv2", watch_switches=False, port_poll_s=1.0)
    ctl._start_sources()
    try:
        assert ctl._sources == []
        assert [e.kind for e in ctl.state.events] == ["port_monitor_off"]
    finally:
        ctl.close()


def test_many_register_cells_are_one_cli_run(bmv2_conn: SwitchConnection, fake_cli: Path) -> None:
    """The experiment sampler reads one cell per port every 0.1 s: one CLI process per Read, not per cell."""
    reg = bmv2_conn.index.get("registers", "port_down")
    cells = []
    for port in (1, 2):
        cell = pb.RegisterEntry(register_id=reg.preamble.id)  # type: ignore[attr-defined]
        cell.index.index = port
        cells.append(cell)
    got = {e.register_entry.index.index: e.register_entry.data.bitstring for e in bmv2_conn.read(*cells)}
    assert got == {1: b"\x01", 2: b"\x01"}
    assert fake_cli.read_text().splitlines() == ["port 50123", "register_read port_down 1",
                                                 "register_read port_down 2"]
