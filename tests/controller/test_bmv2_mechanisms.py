"""Which mechanism the controller uses per target, and the BMv2 side channel's calls, checked without BMv2.

BMv2's P4Runtime server (p4lang/PI DeviceMgr) answers RegisterEntry reads and writes with UNIMPLEMENTED and
has no ExternEntry support, so on BMv2 registers and queues go over the switch's Thrift session. Here a
stand-in Thrift server (tests/support/fake_thrift.py, decoding with the `thrift` library) records the calls
and answers as BMv2's services are declared; tests/controller/test_bmv2_switch.py runs the same against
simple_switch_grpc. The p4exec path is not faked anywhere: it is what every other controller test runs
against a real switch."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import pytest
from p4.v1 import p4runtime_pb2 as pb

from controller.artifacts import PipelineArtifacts, build_artifacts
from controller.bmv2 import Bmv2SideChannel, queue_settings_for
from controller.bmv2_thrift import Bmv2ThriftError, forget_session, session_for
from controller.client import SwitchConnection
from controller.errors import ControllerError
from controller.fabric import FabricController
from controller.policies import make_policy
from tests.support.fake_thrift import FakeBmv2Thrift
from topologies import load


@pytest.fixture(scope="module")
def p4exec_artifacts(tmp_path_factory: pytest.TempPathFactory) -> PipelineArtifacts:
    return build_artifacts(build_dir=tmp_path_factory.mktemp("p4"))


@pytest.fixture
def fake() -> Iterator[FakeBmv2Thrift]:
    server = FakeBmv2Thrift({"port_down": [0, 1, 0, 1], "MyEgress.error": [0, 1]})
    yield server
    server.close()
    forget_session(server.port)


@pytest.fixture
def bmv2_conn(p4exec_artifacts: PipelineArtifacts, fake: FakeBmv2Thrift) -> SwitchConnection:
    """A session that is never connected: register and queue operations must not touch gRPC on BMv2."""
    conn = SwitchConnection("127.0.0.1:1", device_id=1, p4info=p4exec_artifacts.p4info, name="s1")
    conn.bmv2 = Bmv2SideChannel(fake.port, name="s1")
    return conn


def test_register_writes_and_reads_go_over_thrift(bmv2_conn: SwitchConnection, fake: FakeBmv2Thrift) -> None:
    bmv2_conn.write_register("port_down", 3, 1)
    assert bmv2_conn.read_register("port_down", 3) == {3: 1}
    assert bmv2_conn.read_register("port_down") == {0: 0, 1: 1, 2: 0, 3: 1}
    reg = bmv2_conn.index.get("registers", "port_down")
    wildcard = pb.RegisterEntry(register_id=reg.preamble.id)  # type: ignore[attr-defined]
    wildcard.data.bitstring = b"\x00"
    assert bmv2_conn.modify(wildcard) == 1  # what the experiment runner does to clear a register
    assert fake.calls == [
        ("standard", "bm_register_write", 0, "port_down", 3, 1),
        ("standard", "bm_register_read", 0, "port_down", 3),
        ("standard", "bm_register_read_all", 0, "port_down"),
        ("standard", "bm_register_reset", 0, "port_down")]
    assert fake.registers["port_down"] == [0, 0, 0, 0] and fake.accepted == 1  # one session for all


def test_queues_over_thrift_and_no_port_status(bmv2_conn: SwitchConnection, fake: FakeBmv2Thrift) -> None:
    bmv2_conn.set_queue(2, rate_pps=833.3, depth=64)
    bmv2_conn.set_queue(0, depth=32)
    assert fake.calls == [("simple_switch", "set_egress_queue_depth", 2, 64),
                          ("simple_switch", "set_egress_queue_rate", 2, 833),
                          ("simple_switch", "set_all_egress_queue_depths", 32)]
    with pytest.raises(ControllerError, match="no port status") as info:
        bmv2_conn.port_status()
    assert info.value.code == grpc.StatusCode.UNIMPLEMENTED
    with pytest.raises(ControllerError, match="packet rates only"):
        bmv2_conn.set_queue(2, rate_bps=1e9)


def test_refusals_and_absence_are_errors(bmv2_conn: SwitchConnection, fake: FakeBmv2Thrift) -> None:
    with pytest.raises(Bmv2ThriftError, match="bm_register_read: refused .code 2: index out of range"):
        bmv2_conn.read_register("port_down", 9)
    with pytest.raises(Bmv2ThriftError, match="no such register"):
        bmv2_conn.bmv2.register_read("MyIngress.nope")  # type: ignore[union-attr]
    assert bmv2_conn.bmv2.register_read("MyEgress.error") == {0: 0, 1: 1}  # type: ignore[union-attr]
    assert fake.accepted == 1  # a refusal is an answer: the session stays
    no_port = Bmv2SideChannel(None, name="s9")
    with pytest.raises(Bmv2ThriftError, match="s9: .*Thrift port"):
        no_port.register_reset("port_down")
    fake.close()
    forget_session(fake.port)
    with pytest.raises(Bmv2ThriftError, match="unreachable") as info:
        bmv2_conn.write_register("port_down", 1, 1)
    assert info.value.code == grpc.StatusCode.UNAVAILABLE


def test_a_broken_session_is_reopened_once(fake: FakeBmv2Thrift) -> None:
    session = session_for(fake.port)
    assert session is session_for(fake.port)  # one per switch in the process
    channel = Bmv2SideChannel(fake.port)
    channel.register_write("port_down", 0, 1)
    session._transport.close()  # as if the switch had restarted: the next call reconnects and succeeds
    assert channel.register_read("port_down", 0) == {0: 1}
    assert session.connects == 2 and fake.accepted == 2


def test_queue_setting_units() -> None:
    assert queue_settings_for(0, depth=64).depth == 64  # every port
    assert queue_settings_for(5, rate_pps=0.4).rate_pps == 1  # a rate, never 0 (= unlimited)
    assert queue_settings_for(5, rate_pps=0).rate_pps == 0


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


def test_link_liveness_on_bmv2_uses_register_write(p4exec_artifacts: PipelineArtifacts, fake: FakeBmv2Thrift) -> None:
    ctl = _controller(p4exec_artifacts, "bmv2", thrift_ports={"leaf1": fake.port})
    ctl.state.connections["leaf1"] = ctl.new_connection("leaf1")
    ctl.set_port_liveness("leaf1", 3, up=False)
    ctl.set_port_liveness("leaf1", 3, up=True)
    assert fake.calls == [("standard", "bm_register_write", 0, "port_down", 3, 1),
                          ("standard", "bm_register_write", 0, "port_down", 3, 0)]


def test_no_port_monitor_on_bmv2(p4exec_artifacts: PipelineArtifacts) -> None:
    ctl = _controller(p4exec_artifacts, "bmv2", watch_switches=False, port_poll_s=1.0)
    ctl._start_sources()
    try:
        assert ctl._sources == []
        assert [e.kind for e in ctl.state.events] == ["port_monitor_off"]
    finally:
        ctl.close()



def test_many_register_cells_are_one_session(bmv2_conn: SwitchConnection, fake: FakeBmv2Thrift) -> None:
    """The experiment sampler reads one cell per port every 0.1 s: all on the switch's one connection."""
    reg = bmv2_conn.index.get("registers", "port_down")
    cells = []
    for port in (1, 2):
        cell = pb.RegisterEntry(register_id=reg.preamble.id)  # type: ignore[attr-defined]
        cell.index.index = port
        cells.append(cell)
    for _ in range(3):
        got = {e.register_entry.index.index: e.register_entry.data.bitstring for e in bmv2_conn.read(*cells)}
        assert got == {1: b"\x01", 2: b"\x00"}
    assert fake.calls[:2] == [("standard", "bm_register_read", 0, "port_down", 1),
                              ("standard", "bm_register_read", 0, "port_down", 2)]
    assert len(fake.calls) == 6 and fake.accepted == 1


def test_struct_and_list_arguments_are_written_as_thrift_encodes_them() -> None:
    """The table, PRE and meter calls difftest sends carry structs, lists, binaries, bools and doubles: what
    bmv2_thrift writes is what the `thrift` library reads back, field by field."""
    from thrift.protocol.TBinaryProtocol import TBinaryProtocol
    from thrift.Thrift import TType
    from thrift.transport.TTransport import TMemoryBuffer

    from controller.bmv2_thrift import _read, _write, binaries, binary, boolean, double, i32, struct, structs

    args = [structs(3, [(i32(1, 2), struct(4, binary(1, b"\x10"), binary(2, b"\xf0")))]),
            binaries(5, [b"\x00\x03"]), struct(6), boolean(7, True), structs(8, [(double(1, 0.5), i32(2, 7))])]
    buf = TMemoryBuffer()
    proto = TBinaryProtocol(buf)
    _write(proto, TType.STRUCT, tuple(args))
    decoded = _read(TBinaryProtocol(TMemoryBuffer(buf.getvalue())), TType.STRUCT)
    # a list of structs reads back as a list of {field id: value}; field 6 (an empty struct) as {}
    assert decoded == {3: [{1: 2, 4: {1: b"\x10", 2: b"\xf0"}}], 5: [b"\x00\x03"], 6: {}, 7: True,
                       8: [{1: 0.5, 2: 7}]}
