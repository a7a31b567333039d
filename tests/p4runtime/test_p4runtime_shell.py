"""The p4lang project's own client, p4runtime-shell, against our server."""

from __future__ import annotations

import time

import p4runtime_sh.shell as sh
import pytest
from google.protobuf import text_format

from p4exec.v1model.loader import load_config
from tests.support.p4rt_fixture import SOURCE, frame


@pytest.fixture
def shell(server, device, p4info, tmp_path):
    p4info_path = tmp_path / "p4info.txtpb"
    p4info_path.write_text(text_format.MessageToString(p4info))
    bin_path = tmp_path / "empty.bin"  # control-only pipeline: no program behind the P4Info
    bin_path.write_bytes(b"")
    sh.setup(device_id=1, grpc_addr=server.address, election_id=(0, 1),
             config=sh.FwdPipeConfig(str(p4info_path), str(bin_path)), verbose=False)
    yield sh
    sh.teardown()


@pytest.fixture
def shell_prog(server, tmp_path):
    """p4runtime-shell pushing a real P4 program (source as p4_device_config) and its P4Info."""
    p4info = load_config(SOURCE).p4info
    p4info_path = tmp_path / "cpu_l2.p4info.txtpb"
    p4info_path.write_text(text_format.MessageToString(p4info))
    bin_path = tmp_path / "cpu_l2.p4"
    bin_path.write_bytes(SOURCE)
    sh.setup(device_id=1, grpc_addr=server.address, election_id=(0, 1),
             config=sh.FwdPipeConfig(str(p4info_path), str(bin_path)), verbose=False)
    yield sh
    sh.teardown()


def runtime_state(server):
    return server.service.ctx.program.state


def test_shell_table_entries(shell, server):
    te = sh.TableEntry("MyIngress.ipv4_lpm")(action="MyIngress.set_nhop")
    te.match["hdr.ipv4.dstAddr"] = "10.0.1.0/24"
    te.action["dstAddr"] = "00:00:00:00:00:0a"
    te.action["port"] = "2"
    te.insert()
    [got] = list(sh.TableEntry("MyIngress.ipv4_lpm").read())
    assert got.match["hdr.ipv4.dstAddr"].lpm.prefix_len == 24
    table = runtime_state(server).tables["MyIngress.ipv4_lpm"]
    assert table.lookup((0x0A000107,), 64).action.args == (10, 2)
    te.action["port"] = "3"
    te.modify()
    [got] = list(sh.TableEntry("MyIngress.ipv4_lpm").read())
    assert got.action["port"].value == b"\x03"
    assert table.lookup((0x0A000107,), 64).action.args == (10, 3)
    acl = sh.TableEntry("MyIngress.acl")(action="MyIngress.drop")
    acl.match["hdr.ipv4.srcAddr"] = "10.0.0.0&&&255.0.0.0"
    acl.match["hdr.tcp.dstPort"] = "80..90"
    acl.match["hdr.ipv4.protocol"] = "6"
    acl.priority = 5
    acl.insert()
    assert len(list(sh.TableEntry("MyIngress.acl").read())) == 1
    te.delete()
    acl.delete()
    assert list(sh.TableEntry("MyIngress.ipv4_lpm").read()) == []
    assert len(table) == 0


def test_shell_multicast_group(shell, server):
    mcg = sh.MulticastGroupEntry(7).add(1).add(2).add(4)
    mcg.insert()
    [got] = list(sh.MulticastGroupEntry(7).read())
    assert got.group_id == 7
    assert [r._msg.egress_port for r in got.replicas] == [1, 2, 4]
    assert runtime_state(server).pre.replicas(7) == ((1, 0), (2, 0), (4, 0))
    mcg.delete()
    assert 7 not in runtime_state(server).pre.groups


def test_shell_packet_out_and_packet_in(shell_prog, device, server):
    out: list[tuple[int, bytes]] = []
    device.on_output = lambda port, data: out.append((port, data))
    sh.PacketOut(frame(0x77, payload=b"from the shell"), egress_port="3", _pad="0").send()
    deadline = time.monotonic() + 3
    while not out and time.monotonic() < deadline:
        time.sleep(0.01)
    assert out == [(3, frame(0x77, payload=b"from the shell"))]
    te = sh.TableEntry("MyIngress.l2")(action="MyIngress.to_cpu")
    te.match["hdr.ethernet.dstAddr"] = "00:00:00:00:00:0b"
    te.insert()
    sniffer = sh.PacketIn()
    device.inject(4, frame(0x0B))
    [msg] = list(sniffer.sniff(timeout=1))
    assert msg.packet.payload == frame(0x0B)
    assert {m.metadata_id: m.value for m in msg.packet.metadata}[1] == b"\x04"
    # the shell's read of the entry, with the counter the packet bumped
    [got] = list(sh.TableEntry("MyIngress.l2").read())
    assert got.match["hdr.ethernet.dstAddr"].exact.value == b"\x0b"
    assert runtime_state(server).tables["MyIngress.l2"].entries()[0].packet_count == 1


def test_shell_reaches_a_switch_on_its_unix_socket(device, p4info, tmp_path):
    """docs/security.md: p4runtime-shell users type `--grpc-addr unix:PATH` for a standalone switch's socket."""
    from p4exec.p4runtime import P4RuntimeServer

    p4info_path = tmp_path / "p4info.txtpb"
    p4info_path.write_text(text_format.MessageToString(p4info))
    bin_path = tmp_path / "empty.bin"
    bin_path.write_bytes(b"")
    with P4RuntimeServer(device, f"unix:{tmp_path}/switch-1.sock") as srv:
        sh.setup(device_id=1, grpc_addr=srv.address, election_id=(0, 1),
                 config=sh.FwdPipeConfig(str(p4info_path), str(bin_path)), verbose=False)
        try:
            assert srv.service.ctx is not None  # the shell pushed its pipeline over the socket
        finally:
            sh.teardown()
