"""@p4runtime_translation through p4exec's P4Runtime server: the controller writes and reads SDN values, the data
plane matches and forwards on device values (tests/p4/88_p4runtime_translation.p4, over real gRPC)."""
from __future__ import annotations

import time
from pathlib import Path

import grpc
import pytest
from p4.v1 import p4runtime_pb2

from p4exec.p4runtime import P4RuntimeServer
from p4exec.p4runtime.errors import P4RuntimeError
from p4exec.p4runtime.sdn_translation import SdnConfig, TranslatedType, TranslationTable
from p4exec.switch.inprocess import InProcessDevice
from p4exec.v1model.loader import load_config
from tests.support.p4rt_client import RUNNING, Client, U, update

SOURCE = (Path(__file__).parents[1] / "p4" / "88_p4runtime_translation.p4").read_bytes()
PORT = TranslatedType("port_t", "ethlab.example/port", 32, 9)
TENANT = TranslatedType("tenant_t", "ethlab.example/tenant", None, 8)


# -- the table on its own ---------------------------------------------------------------------------
def test_identity_for_bit_widths_within_the_device_width() -> None:
    t = TranslationTable(PORT)
    assert t.to_device(b"\x00\x00\x00\x05") == 5 and t.to_sdn(5) == b"\x05"
    with pytest.raises(P4RuntimeError, match="INVALID_ARGUMENT: no mapping for SDN value 512"):
        t.to_device((512).to_bytes(4, "big"))
    with pytest.raises(P4RuntimeError, match="does not fit in 32 bits"):
        t.to_device(b"\x01" + b"\x00" * 4)


def test_explicit_mapping_is_symmetric_and_closed() -> None:
    t = TranslationTable(PORT, {1: 7, 0xFFFFFFFD: 510})
    assert t.to_device(b"\x01") == 7 and t.to_sdn(7) == b"\x01"
    assert t.to_device(b"\xff\xff\xff\xfd") == 510 and t.to_sdn(510) == b"\xff\xff\xff\xfd"
    with pytest.raises(P4RuntimeError, match="INVALID_ARGUMENT: no mapping for SDN value 2"):
        t.to_device(b"\x02")
    with pytest.raises(P4RuntimeError, match="INTERNAL: device value 8 .* has no SDN mapping"):
        t.to_sdn(8)
    with pytest.raises(ValueError, match="mapped twice"):
        TranslationTable(PORT, {1: 7, 2: 7})


def test_strings_get_the_lowest_free_device_value_in_first_written_order() -> None:
    t = TranslationTable(TENANT, None)
    assert [t.to_device(s) for s in (b"blue", b"red", b"blue")] == [0, 1, 0]
    assert t.to_sdn(1) == b"red"
    with pytest.raises(P4RuntimeError, match="INTERNAL"):
        t.to_sdn(2)
    full = TranslationTable(TranslatedType("t", "u", None, 1))
    full.to_device(b"a")
    full.to_device(b"b")
    with pytest.raises(P4RuntimeError, match="RESOURCE_EXHAUSTED"):
        full.to_device(b"c")
    with pytest.raises(P4RuntimeError, match="non-empty SDN strings"):
        full.to_device(b"")


# -- through the server ------------------------------------------------------------------------------
@pytest.fixture
def setup():
    device = InProcessDevice(device_id=1, cpu_port=255, ports=(1, 2, 3, 4, 5, 6, 7))
    srv = P4RuntimeServer(device, address="127.0.0.1:0").start()
    RUNNING.append(srv)
    srv.service.sdn_config = SdnConfig({"ethlab.example/port": {100: 5, 200: 6}})
    c = Client(srv.address, election_id=1)
    try:
        c.connect()
        p4info = load_config(SOURCE).p4info
        c.set_pipeline(p4info, SOURCE)
        out: list[tuple[int, bytes]] = []
        device.on_output = lambda port, data: out.append((port, data))
        yield c, p4info, device, out
    finally:
        c.close()
        RUNNING.remove(srv)
        srv.stop(grace=0.5)


def _entry(p4info, tenant: bytes, port: int, mark: int) -> p4runtime_pb2.TableEntry:
    t = next(t for t in p4info.tables if t.preamble.name == "MyIngress.by_tenant")
    a = next(a for a in p4info.actions if a.preamble.name == "MyIngress.to_port")
    e = p4runtime_pb2.TableEntry(table_id=t.preamble.id)
    e.match.add(field_id=1).exact.value = tenant
    e.action.action.action_id = a.preamble.id
    e.action.action.params.add(param_id=1, value=port.to_bytes(4, "big"))
    e.action.action.params.add(param_id=2, value=bytes([mark]))
    return e


def test_sdn_values_written_device_values_used_sdn_values_read(setup) -> None:
    c, p4info, device, out = setup
    port_param = next(a for a in p4info.actions if a.preamble.name == "MyIngress.to_port").params[0]
    assert port_param.bitwidth == 32 and port_param.type_name.name == "port_t"
    c.write(update(U.INSERT, table_entry=_entry(p4info, b"blue", 200, 0x77)),
            update(U.INSERT, table_entry=_entry(p4info, b"red", 100, 0x55)))
    device.inject(1, bytes([1, 0, 0x12, 0x34]))     # tenant "red" got device value 1: SDN port 100 = port 5
    device.inject(1, bytes([0, 0, 0xAB, 0xCD]))     # "blue" = 0: SDN port 200 = device port 6
    assert out == [(5, bytes([1, 0x55, 0x12, 0x34])), (6, bytes([0, 0x77, 0xAB, 0xCD]))]
    got = sorted((e.table_entry.match[0].exact.value, e.table_entry.action.action.params[0].value)
                 for e in c.read(p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry())))
    assert got == [(b"blue", bytes([200])), (b"red", bytes([100]))]


def test_a_value_without_mapping_is_rejected_and_nothing_changes(setup) -> None:
    c, p4info, _device, _out = setup
    with pytest.raises(grpc.RpcError) as e:
        c.write(update(U.INSERT, table_entry=_entry(p4info, b"green", 300, 1)))
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "no mapping for SDN value 300 of port_t" in (e.value.details() or "")
    assert c.read(p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry())) == []


def test_packet_in_and_out_metadata_carry_sdn_ports(setup) -> None:
    c, p4info, device, out = setup
    pout = next(m for m in p4info.controller_packet_metadata if m.preamble.name == "packet_out")
    assert [(m.name, m.bitwidth, m.type_name.name) for m in pout.metadata] == [("egress_port", 32, "port_t"),
                                                                                ("pad", 7, "")]
    msg = p4runtime_pb2.StreamMessageRequest()
    msg.packet.payload = bytes([9, 0, 0, 1])
    msg.packet.metadata.add(metadata_id=1, value=(200).to_bytes(4, "big"))    # SDN port 200 = device port 6
    msg.packet.metadata.add(metadata_id=2, value=b"\x00")
    c.send(msg)
    deadline = time.monotonic() + 3
    while not out and time.monotonic() < deadline:
        time.sleep(0.01)
    assert out == [(6, bytes([9, 0, 0, 1]))]
    cpu = next(a for a in p4info.actions if a.preamble.name == "MyIngress.to_cpu")
    t = next(t for t in p4info.tables if t.preamble.name == "MyIngress.by_tenant")
    e = p4runtime_pb2.TableEntry(table_id=t.preamble.id)
    e.match.add(field_id=1).exact.value = b"ops"
    e.action.action.action_id = cpu.preamble.id
    c.write(update(U.INSERT, table_entry=e))       # "ops" is the first tenant string: device value 0
    device.inject(5, bytes([0, 0, 0x56, 0x78]))     # device port 5 = SDN port 100
    pin = c.get("packet").packet
    assert pin.payload == bytes([0, 0, 0x56, 0x78])
    assert {m.metadata_id: m.value for m in pin.metadata} == {1: bytes([100]), 2: b"\x00"}


def test_read_filter_names_sdn_values(setup) -> None:
    c, p4info, _device, _out = setup
    c.write(update(U.INSERT, table_entry=_entry(p4info, b"blue", 200, 0x77)),
            update(U.INSERT, table_entry=_entry(p4info, b"red", 100, 0x55)))
    want = _entry(p4info, b"red", 100, 0)
    want.ClearField("action")
    [got] = c.read(p4runtime_pb2.Entity(table_entry=want))
    assert got.table_entry.match[0].exact.value == b"red"
    assert got.table_entry.action.action.params[0].value == bytes([100])
