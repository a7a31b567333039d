"""The P4Runtime client on its own against one real `p4exec switch` over gRPC, with real frames from
host namespaces: table writes and reads, counters, registers, multicast, clone, packet I/O, digests,
master arbitration and per-update errors."""

from __future__ import annotations

import time
from pathlib import Path

import grpc
import pytest

from controller.client import SwitchConnection
from controller.codec import decode
from controller.errors import WriteError
from p4exec.switch.lab import Lab
from tests.support.controller import LabSwitch, ether, send_frames

pytestmark = pytest.mark.netns

MAC_A = "02:00:00:00:0a:0a"
MAC_B = "02:00:00:00:0b:0b"


def _port_of(conn: SwitchConnection, entry) -> int:
    return decode(entry.action.action.params[0].value)


def test_insert_read_modify_delete(conn: SwitchConnection) -> None:
    entry = conn.table_entry("l2", {"hdr.ethernet.dst": MAC_A}, "forward", {"port": 2})
    assert conn.insert(entry) == 1
    [back] = conn.read_table("l2")
    assert back.match == entry.match and _port_of(conn, back) == 2
    conn.modify(conn.table_entry("l2", {"hdr.ethernet.dst": MAC_A}, "forward", {"port": 3}))
    [back] = conn.read_table("l2")
    assert _port_of(conn, back) == 3
    conn.delete(conn.table_entry("l2", {"hdr.ethernet.dst": MAC_A}))
    assert conn.read_table("l2") == []


def test_forwarding_counters_and_registers(conn: SwitchConnection, lab: Lab, tmp_path: Path, capture) -> None:
    conn.insert(conn.table_entry("l2", {"hdr.ethernet.dst": MAC_B}, "forward", {"port": 2}))
    cap = capture(2, count=5)
    frames = [ether(MAC_B, payload=bytes([i]) * 100) for i in range(5)]
    send_frames(lab, tmp_path, 1, frames)
    got = cap.frames()
    assert got == frames
    packets, octets = conn.read_counter("rx_count", 1)[1]
    assert (packets, octets) == (5, 5 * len(frames[0]))
    [hit] = conn.read_table("l2", with_counters=True)
    assert hit.counter_data.packet_count == 5
    assert conn.read_register("last_len", 1) == {1: len(frames[0])}
    conn.write_register("last_len", 7, 0xDEAD)
    assert conn.read_register("last_len", 7) == {7: 0xDEAD}
    assert len(conn.read_register("last_len")) == 16


def test_multicast_group(conn: SwitchConnection, lab: Lab, tmp_path: Path, capture) -> None:
    conn.insert(conn.multicast_group(5, [2, 3]))
    conn.insert(conn.table_entry("l2", {"hdr.ethernet.dst": "ff:ff:ff:ff:ff:ff"}, "flood", {"grp": 5}))
    [pre] = list(conn.read(conn.multicast_group(5, [])))
    assert sorted(r.egress_port for r in pre.packet_replication_engine_entry.multicast_group_entry.replicas) == [2, 3]
    caps = [capture(2, count=1), capture(3, count=1)]
    frame = ether("ff:ff:ff:ff:ff:ff", payload=b"flood")
    send_frames(lab, tmp_path, 1, [frame])
    assert [c.frames() for c in caps] == [[frame], [frame]]


def test_clone_session(conn: SwitchConnection, lab: Lab, tmp_path: Path, capture) -> None:
    conn.insert(conn.clone_session(7, [3]))
    conn.insert(conn.table_entry("l2", {"hdr.ethernet.dst": MAC_A}, "mirror", {"port": 2, "session": 7}))
    caps = [capture(2, count=1), capture(3, count=1)]
    frame = ether(MAC_A, payload=b"mirror me")
    send_frames(lab, tmp_path, 1, [frame])
    assert [c.frames() for c in caps] == [[frame], [frame]]


def test_packet_out_and_packet_in(conn: SwitchConnection, lab: Lab, tmp_path: Path, capture) -> None:
    cap = capture(3, count=1)
    frame = ether(MAC_B, payload=b"from the controller")
    conn.packet_out(frame, egress_port=3)
    assert cap.frames() == [frame]
    conn.insert(conn.table_entry("l2", {"hdr.ethernet.dst": MAC_A}, "punt"))
    up = ether(MAC_A, payload=b"to the controller")
    send_frames(lab, tmp_path, 2, [up])
    got = conn.packet_in(timeout=5)
    assert got is not None
    payload, meta = got
    assert payload == up and meta["ingress_port"] == 2


def test_digest(conn: SwitchConnection, lab: Lab, tmp_path: Path) -> None:
    conn.insert(conn.digest_config("seen_t", max_list_size=1))
    conn.insert(conn.table_entry("l2", {"hdr.ethernet.dst": MAC_A}, "report", {"port": 2}))
    src = "02:00:00:00:33:44"
    send_frames(lab, tmp_path, 3, [ether(MAC_A, src=src)])
    digest = conn.digests.get(timeout=5)
    [item] = digest.data
    values = [decode(member.bitstring) for member in item.struct.members]
    assert values == [0x020000003344, 3]
    conn.ack_digest(digest)


def test_arbitration_lower_election_id_cannot_write(conn: SwitchConnection, switch, artifacts) -> None:
    second = SwitchConnection(switch.addr, device_id=switch.device_id, p4info=artifacts.p4info, election_id=3, timeout=30,
                              name="backup")
    second.connect()
    try:
        assert conn.is_primary and not second.is_primary
        with pytest.raises(WriteError) as err:
            second.insert(second.table_entry("l2", {"hdr.ethernet.dst": MAC_A}, "forward", {"port": 1}))
        assert err.value.code == grpc.StatusCode.PERMISSION_DENIED
        assert conn.read_table("l2") == []  # nothing was written
        assert [e.table_entry for e in second.read(second.table_entry("l2"))] == []  # reads are allowed
    finally:
        second.close()
    # The primary is still the primary and can write.
    assert conn.insert(conn.table_entry("l2", {"hdr.ethernet.dst": MAC_A}, "forward", {"port": 1})) == 1


def test_write_errors_carry_per_update_codes(conn: SwitchConnection) -> None:
    entry = conn.table_entry("l2", {"hdr.ethernet.dst": MAC_A}, "forward", {"port": 1})
    conn.insert(entry)
    fresh = conn.table_entry("l2", {"hdr.ethernet.dst": MAC_B}, "forward", {"port": 2})
    missing = conn.table_entry("l2", {"hdr.ethernet.dst": "02:00:00:00:00:99"})
    from p4.v1 import p4runtime_pb2 as pb

    from controller.client import as_entity

    updates = [pb.Update(type=pb.Update.INSERT, entity=as_entity(entry)),
               pb.Update(type=pb.Update.INSERT, entity=as_entity(fresh)),
               pb.Update(type=pb.Update.DELETE, entity=as_entity(missing))]
    with pytest.raises(WriteError) as err:
        conn.write(updates)
    assert [(f.index, f.code) for f in err.value.failures] == [(0, "ALREADY_EXISTS"), (2, "NOT_FOUND")]
    assert "ALREADY_EXISTS" in str(err.value)
    # CONTINUE_ON_ERROR: the good update in the middle was applied.
    assert len(conn.read_table("l2")) == 2
    with pytest.raises(KeyError, match="no table named"):
        conn.table_entry("nope", {})


def test_stream_break_is_seen_when_the_switch_stops(lab: Lab, artifacts) -> None:


    sw = LabSwitch(lab, device_id=2)
    client = SwitchConnection(sw.addr, device_id=2, p4info=artifacts.p4info, timeout=30)
    try:
        client.connect()
        assert client.is_primary and client.stream_alive()
        sw.proc.stop()
        deadline = time.monotonic() + 5
        while client.stream_alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not client.stream_alive() and not client.is_primary
    finally:
        client.close()
        sw.close()
