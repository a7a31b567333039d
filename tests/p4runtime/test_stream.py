"""StreamChannel: packet-out/packet-in through the device's CPU port, digests with acks, errors."""

from __future__ import annotations

import queue
import time

import pytest
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2

from tests.support.p4rt_client import U, current_server, update
from tests.support.p4rt_fixture import A_NOACTION, D_LEARN, T_HOSTS


class EchoProgram:
    """A tiny data plane standing in for a compiled program (until the harness lands):
    frames from the CPU port leave on the port named by their packet_out header; frames
    from other ports go to the CPU port behind a packet_in header with the ingress port."""

    def run(self, port: int, frame: bytes) -> list[tuple[int, bytes]]:
        if port == 255:
            hdr = int.from_bytes(frame[:2], "big")
            return [(hdr >> 7, frame[2:])]
        return [(255, ((port << 7).to_bytes(2, "big")) + frame)]


@pytest.fixture
def wired(primary, device):
    device.program.loaded = EchoProgram()
    out: list[tuple[int, bytes]] = []
    device.on_output = lambda port, data: out.append((port, data))
    return primary, device, out


def packet_out(payload: bytes, port: int) -> p4runtime_pb2.StreamMessageRequest:
    msg = p4runtime_pb2.StreamMessageRequest()
    msg.packet.payload = payload
    msg.packet.metadata.add(metadata_id=1, value=port.to_bytes(2, "big"))
    msg.packet.metadata.add(metadata_id=2, value=b"\x00")
    return msg


def wait_for(pred, timeout=3.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.005)
    return False


def test_packet_out_leaves_on_the_port_named_by_metadata(wired):
    client, _device, out = wired
    client.send(packet_out(b"hello-world", 3))
    assert wait_for(lambda: out)
    assert out == [(3, b"hello-world")]


def test_packet_in_reaches_only_the_primary(wired, make_client):
    client, device, _out = wired
    backup = make_client(election_id=1)
    backup.connect()
    device.inject(2, b"\xaa" * 20)
    msg = client.get("packet")
    assert msg.packet.payload == b"\xaa" * 20
    md = {m.metadata_id: m.value for m in msg.packet.metadata}
    assert md == {1: b"\x02", 2: b"\x00"}
    with pytest.raises(queue.Empty):
        backup.get("packet", timeout=0.3)


def test_packet_out_errors_come_back_as_stream_errors(wired, make_client):
    client, _device, out = wired
    bad = packet_out(b"x", 3)
    bad.packet.metadata[0].value = b"\x02\x00"  # 512 does not fit 9 bits
    client.send(bad)
    err = client.get("error")
    assert err.error.canonical_code == code_pb2.OUT_OF_RANGE
    assert err.error.packet_out.packet_out.payload == b"x"
    unknown = packet_out(b"y", 3)
    unknown.packet.metadata.add(metadata_id=9, value=b"\x01")
    client.send(unknown)
    assert client.get("error").error.canonical_code == code_pb2.INVALID_ARGUMENT
    backup = make_client(election_id=1)
    backup.connect()
    backup.send(packet_out(b"z", 3))
    assert backup.get("error").error.canonical_code == code_pb2.PERMISSION_DENIED
    time.sleep(0.1)
    assert out == []
    # the stream is still usable after errors
    client.send(packet_out(b"ok", 1))
    assert wait_for(lambda: out == [(1, b"ok")])


def test_client_disconnect_mid_stream_leaves_server_serving(wired, make_client):
    client, device, out = wired
    flaky = make_client(election_id=50)
    flaky.connect()
    assert client.get("arbitration").arbitration.status.code == code_pb2.ALREADY_EXISTS
    flaky.send(packet_out(b"a", 1))
    flaky.channel.close()  # vanish without a word
    note = client.get("arbitration")
    assert note.arbitration.status.code == code_pb2.NOT_FOUND
    client.arbitrate(60)
    assert client.get("arbitration").arbitration.status.code == code_pb2.OK
    client.send(packet_out(b"b", 2))
    assert wait_for(lambda: (2, b"b") in out)
    device.inject(1, b"zz")
    assert client.get("packet").packet.payload == b"zz"
    assert len(current_server().service.arbitrator.sessions()) == 1


def configure_digest(client, **cfg):
    d = p4runtime_pb2.DigestEntry(digest_id=D_LEARN)
    for k, v in cfg.items():
        setattr(d.config, k, v)
    client.write(update(U.INSERT, digest_entry=d))


def learn(mac: int, port: int) -> None:
    current_server().service.ctx.program.state.digests["learn_t"].emit((mac, port))


def test_digest_lists_batch_by_size_and_ack_suppresses_duplicates(primary):
    configure_digest(primary, max_timeout_ns=10**10, max_list_size=2, ack_timeout_ns=10**10)
    learn(0xA, 1)
    learn(0xA, 1)  # duplicate of data waiting in the list: not repeated
    learn(0xB, 2)
    msg = primary.get("digest").digest
    assert msg.digest_id == D_LEARN and len(msg.data) == 2
    values = [[m.bitstring for m in d.struct.members] for d in msg.data]
    assert values == [[b"\x0a", b"\x01"], [b"\x0b", b"\x02"]]
    learn(0xA, 1)  # sent, not acked yet: suppressed
    learn(0xC, 3)
    with pytest.raises(queue.Empty):
        primary.get("digest", timeout=0.2)
    ack = p4runtime_pb2.StreamMessageRequest()
    ack.digest_ack.digest_id, ack.digest_ack.list_id = D_LEARN, msg.list_id
    primary.send(ack)
    time.sleep(0.1)
    learn(0xA, 1)  # acked: allowed again, completes the list with 0xC
    again = primary.get("digest").digest
    assert len(again.data) == 2 and again.list_id != msg.list_id


def test_digest_timeout_sends_partial_list(primary):
    configure_digest(primary, max_timeout_ns=2_000_000, max_list_size=100)
    learn(0x1, 1)
    msg = primary.get("digest", timeout=2).digest
    assert len(msg.data) == 1


def test_server_without_ticker_sends_digests_only_when_its_owner_polls(device, p4info):
    """`ticker=False` (the virtual-time fabric): no wall-clock thread drains digests; a partial list whose
    timeout has passed goes out at the owner's `service.poll()`, i.e. at an instant the owner chooses."""
    from p4exec.p4runtime import P4RuntimeServer
    from tests.support.p4rt_client import RUNNING, Client

    srv = P4RuntimeServer(device, address="127.0.0.1:0", ticker=False).start()
    RUNNING.append(srv)
    client = Client(srv.address, election_id=10)
    try:
        client.connect()
        client.set_pipeline(p4info)
        configure_digest(client, max_timeout_ns=1_000_000, max_list_size=100)
        learn(0x1, 1)
        with pytest.raises(queue.Empty):
            client.get("digest", timeout=0.3)  # 300x the list's timeout: nobody polled
        srv.service.poll()  # collects the digest: its list starts now
        time.sleep(0.01)
        srv.service.poll()  # the list's timeout has passed: sent
        assert len(client.get("digest", timeout=2).digest.data) == 1
    finally:
        client.close()
        RUNNING.remove(srv)
        srv.stop(grace=0.5)


def test_unconfigured_digest_is_dropped(primary):
    learn(0x1, 1)
    with pytest.raises(queue.Empty):
        primary.get("digest", timeout=0.3)


def host_entry(mac: int, timeout_ns: int) -> p4runtime_pb2.TableEntry:
    e = p4runtime_pb2.TableEntry(table_id=T_HOSTS, idle_timeout_ns=timeout_ns)
    e.match.add(field_id=1).exact.value = mac.to_bytes(6, "big")
    e.action.action.action_id = A_NOACTION
    return e


def test_idle_timeout_notification_and_time_since_last_hit(primary):
    primary.write(update(U.INSERT, table_entry=host_entry(0xA, 50_000_000)),
                  update(U.INSERT, table_entry=host_entry(0xB, 10**12)))
    note = primary.get("idle_timeout_notification", timeout=3).idle_timeout_notification
    assert [e.match[0].exact.value for e in note.table_entry] == [b"\x0a"]
    assert note.table_entry[0].idle_timeout_ns == 50_000_000
    with pytest.raises(queue.Empty):  # reported once while it stays idle
        primary.get("idle_timeout_notification", timeout=0.3)
    table = current_server().service.ctx.program.state.tables["MyIngress.hosts"]
    assert table.lookup((0xA,), 64).hit  # a hit refreshes it: it is reported again later
    again = primary.get("idle_timeout_notification", timeout=3).idle_timeout_notification
    assert again.table_entry[0].match[0].exact.value == b"\x0a"
    req = p4runtime_pb2.TableEntry(table_id=T_HOSTS)
    req.time_since_last_hit.SetInParent()
    got = {e.table_entry.match[0].exact.value: e.table_entry
           for e in primary.read(p4runtime_pb2.Entity(table_entry=req))}
    assert got[b"\x0a"].time_since_last_hit.elapsed_ns >= 50_000_000
    assert got[b"\x0b"].HasField("time_since_last_hit")


def test_ticker_polls_fast_only_when_timing_matters(primary):
    """The server's ticker runs at digest-timeout resolution only while digests are configured or waiting,
    or the pipeline has idle-timeout tables; otherwise it sleeps longer (an idle switch costs ~0 % CPU)."""
    from p4exec.p4runtime.digests import DigestEngine

    engine = DigestEngine(send=lambda _msg: None)
    assert not engine.busy()
    engine.configure({D_LEARN: p4runtime_pb2.DigestEntry.Config(max_list_size=1)})
    assert engine.busy()
    engine.reset()
    assert not engine.busy()
    service = current_server().service
    assert service.live.has_idle_tables and service.needs_fast_poll()  # this P4Info's hosts table
