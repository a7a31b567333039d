"""A real P4 program pushed over gRPC: P4Info checks, forwarding, packet-in/out, digests, counters."""

from __future__ import annotations

import time

import grpc
import pytest
from p4.v1 import p4data_pb2, p4runtime_pb2

from p4exec.v1model.loader import load_config
from tests.support.p4rt_client import U, update
from tests.support.p4rt_fixture import SOURCE, frame

MAC_A, MAC_CPU, MAC_LEARN, MAC_FLOOD = 0xA, 0xB, 0xC, 0xD
Entity = p4runtime_pb2.Entity


class Names:
    """Name -> id lookups in the compiled P4Info (what a controller does)."""

    def __init__(self, p4info):
        self.p4info = p4info

    @staticmethod
    def p4info_of(client):
        get = p4runtime_pb2.GetForwardingPipelineConfigRequest(
            device_id=1, response_type=p4runtime_pb2.GetForwardingPipelineConfigRequest.P4INFO_AND_COOKIE)
        return client.stub.GetForwardingPipelineConfig(get, timeout=5).config.p4info

    def id(self, section: str, name: str) -> int:
        return next(o.preamble.id for o in getattr(self.p4info, section) if o.preamble.name == name)


@pytest.fixture
def prog(make_client, device):
    p4info = load_config(SOURCE).p4info
    c = make_client(election_id=1)
    c.connect()
    c.set_pipeline(p4info, SOURCE)
    out: list[tuple[int, bytes]] = []
    device.on_output = lambda port, data: out.append((port, data))
    return c, Names(p4info), device, out


def l2_entry(n: Names, mac: int, action: str, **params: int) -> p4runtime_pb2.TableEntry:
    e = p4runtime_pb2.TableEntry(table_id=n.id("tables", "MyIngress.l2"))
    e.match.add(field_id=1).exact.value = mac.to_bytes(6, "big")
    e.action.action.action_id = n.id("actions", f"MyIngress.{action}")
    for i, v in enumerate(params.values(), 1):
        e.action.action.params.add(param_id=i, value=v.to_bytes(2, "big"))
    return e


def test_p4info_must_agree_with_program(make_client, p4info):
    c = make_client(election_id=1)
    c.connect()
    with pytest.raises(grpc.RpcError) as exc:
        c.set_pipeline(p4info, SOURCE)  # the router P4Info of the other tests
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    compiled = load_config(SOURCE).p4info
    real = type(compiled)()
    real.CopyFrom(compiled)  # the compiler caches its P4Info: never mutate that one
    real.actions[0].params.add(id=9, name="extra", bitwidth=8)
    with pytest.raises(grpc.RpcError) as exc:
        c.set_pipeline(real, SOURCE)
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.RpcError) as exc:
        c.set_pipeline(real, b"control { this is not P4")
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    get = p4runtime_pb2.GetForwardingPipelineConfigRequest(device_id=1)
    assert not c.stub.GetForwardingPipelineConfig(get, timeout=5).HasField("config")  # nothing set


def test_device_config_round_trips(prog):
    c, _n, _device, _out = prog
    resp = c.stub.GetForwardingPipelineConfig(p4runtime_pb2.GetForwardingPipelineConfigRequest(
        device_id=1, response_type=p4runtime_pb2.GetForwardingPipelineConfigRequest.ALL), timeout=5)
    assert resp.config.p4_device_config == SOURCE


def test_forwarding_counters_and_registers(prog):
    c, n, device, out = prog
    c.write(update(U.INSERT, table_entry=l2_entry(n, MAC_A, "set_port", port=2)))
    device.inject(1, frame(MAC_A))
    device.inject(1, frame(MAC_A))
    device.inject(3, frame(0x99))  # default action: drop
    assert out == [(2, frame(MAC_A)), (2, frame(MAC_A))]
    req = p4runtime_pb2.TableEntry(table_id=n.id("tables", "MyIngress.l2"))
    req.counter_data.SetInParent()
    [e] = [x.table_entry for x in c.read(Entity(table_entry=req))]
    assert (e.counter_data.packet_count, e.counter_data.byte_count) == (2, 2 * len(frame(MAC_A)))
    ce = p4runtime_pb2.CounterEntry(counter_id=n.id("counters", "MyIngress.port_counter"))
    ce.index.index = 1
    [got] = c.read(Entity(counter_entry=ce))
    assert got.counter_entry.data.packet_count == 2
    re_ = p4runtime_pb2.RegisterEntry(register_id=n.id("registers", "MyIngress.seen"))
    re_.index.index = 3
    [got] = c.read(Entity(register_entry=re_))
    assert got.register_entry.data.bitstring == b"\x01"
    # a register written by the controller is what the program reads next
    re_.data.CopyFrom(p4data_pb2.P4Data(bitstring=b"\x64"))
    c.write(update(U.MODIFY, register_entry=re_))
    device.inject(3, frame(0x99))
    [got] = c.read(Entity(register_entry=p4runtime_pb2.RegisterEntry(
        register_id=re_.register_id, index=re_.index)))
    assert got.register_entry.data.bitstring == b"\x65"
    # default entry MODIFY changes what misses do
    default = p4runtime_pb2.TableEntry(table_id=req.table_id, is_default_action=True)
    default.action.action.action_id = n.id("actions", "MyIngress.set_port")
    default.action.action.params.add(param_id=1, value=b"\x04")
    c.write(update(U.MODIFY, table_entry=default))
    out.clear()
    device.inject(3, frame(0x99))
    assert out == [(4, frame(0x99))]


def test_packet_out_through_pipeline_and_packet_in(prog):
    c, n, device, out = prog
    msg = p4runtime_pb2.StreamMessageRequest()
    msg.packet.payload = frame(0x77, payload=b"from the controller")
    msg.packet.metadata.add(metadata_id=1, value=b"\x03")
    msg.packet.metadata.add(metadata_id=2, value=b"\x00")
    c.send(msg)
    deadline = time.monotonic() + 3
    while not out and time.monotonic() < deadline:
        time.sleep(0.01)
    assert out == [(3, frame(0x77, payload=b"from the controller"))]
    c.write(update(U.INSERT, table_entry=l2_entry(n, MAC_CPU, "to_cpu")))
    device.inject(2, frame(MAC_CPU))
    pin = c.get("packet").packet
    assert pin.payload == frame(MAC_CPU)
    assert {m.metadata_id: m.value for m in pin.metadata} == {1: b"\x02", 2: b"\x00"}


def test_multicast_through_pipeline(prog):
    c, n, device, out = prog
    mg = p4runtime_pb2.PacketReplicationEngineEntry()
    mg.multicast_group_entry.multicast_group_id = 5
    for port in (1, 3, 4):
        mg.multicast_group_entry.replicas.add(egress_port=port, instance=1)
    c.write(update(U.INSERT, packet_replication_engine_entry=mg))
    c.write(update(U.INSERT, table_entry=l2_entry(n, MAC_FLOOD, "flood", grp=5)))
    device.inject(2, frame(MAC_FLOOD))
    assert sorted(p for p, _ in out) == [1, 3, 4]


def test_learning_digest(prog):
    c, n, device, _out = prog
    d = p4runtime_pb2.DigestEntry(digest_id=n.id("digests", "learn_t"))
    d.config.max_timeout_ns, d.config.max_list_size = 1_000_000, 10
    c.write(update(U.INSERT, digest_entry=d))
    c.write(update(U.INSERT, table_entry=l2_entry(n, MAC_LEARN, "learn")))
    device.inject(2, frame(MAC_LEARN, src=0x0A0B0C0D0E0F))
    device.inject(2, frame(MAC_LEARN, src=0x0A0B0C0D0E0F))  # same data: one digest
    msg = c.get("digest", timeout=3).digest
    assert msg.digest_id == d.digest_id
    [data] = msg.data
    assert [m.bitstring for m in data.struct.members] == [bytes.fromhex("0a0b0c0d0e0f"), b"\x02"]


def test_reconcile_keeps_forwarding_state_in_the_new_program(prog):
    c, n, device, out = prog
    c.write(update(U.INSERT, table_entry=l2_entry(n, MAC_A, "set_port", port=2)))
    device.inject(1, frame(MAC_A))
    old_state = device.program.state
    cfg = p4runtime_pb2.SetForwardingPipelineConfigRequest
    c.set_pipeline(Names.p4info_of(c), SOURCE, action=cfg.RECONCILE_AND_COMMIT)
    assert device.program.state is not old_state  # a new program instance is live
    out.clear()
    device.inject(1, frame(MAC_A))
    assert out == [(2, frame(MAC_A))]
    req = p4runtime_pb2.TableEntry(table_id=n.id("tables", "MyIngress.l2"))
    req.counter_data.SetInParent()
    [e] = [x.table_entry for x in c.read(Entity(table_entry=req))]
    assert e.counter_data.packet_count == 2  # the counter came along too


def test_const_entries_read_and_only_direct_resources_change(prog):
    c, n, device, out = prog
    tid = n.id("tables", "MyIngress.arp_guard")
    req = p4runtime_pb2.TableEntry(table_id=tid)
    req.counter_data.SetInParent()
    [e] = [x.table_entry for x in c.read(Entity(table_entry=req))]
    assert e.is_const and e.match[0].exact.value == b"\x08\x06"
    assert e.action.action.action_id == n.id("actions", "MyIngress.drop")
    arp = frame(0xFFFFFFFFFFFF)[:12] + b"\x08\x06" + b"arp..."
    device.inject(1, arp)
    [e] = [x.table_entry for x in c.read(Entity(table_entry=req))]
    assert e.counter_data.packet_count == 1
    key = p4runtime_pb2.TableEntry(table_id=tid)
    key.match.add(field_id=1).exact.value = b"\x08\x06"
    with_action = p4runtime_pb2.TableEntry()
    with_action.CopyFrom(key)
    with_action.action.action.action_id = n.id("actions", "NoAction")
    from google.rpc import code_pb2

    from tests.support.p4rt_client import fail_code
    assert fail_code(c, update(U.DELETE, table_entry=key),
                     update(U.MODIFY, table_entry=with_action)) == [code_pb2.PERMISSION_DENIED] * 2
    reset = p4runtime_pb2.TableEntry()
    reset.CopyFrom(key)
    reset.counter_data.packet_count = 0
    c.write(update(U.MODIFY, table_entry=reset))  # direct resources of a const entry may change
    [e] = [x.table_entry for x in c.read(Entity(table_entry=req))]
    assert e.counter_data.packet_count == 0 and e.is_const
