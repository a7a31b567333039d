"""Digest data over gRPC in the P4Data shape the digest's P4Info type_spec gives, as BMv2's P4Runtime server
sends it: a list expression (a tuple in P4Info) as P4Data.tuple, a named struct as P4Data.struct, one field
as a bitstring. The program (tests/p4/104_digest_shapes.p4, whose P4Info the p4c reference test compares) is
compiled, pushed with SetForwardingPipelineConfig and fed a frame; the digests come back on the stream."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from google.protobuf import text_format
from p4.config.v1 import p4info_pb2
from p4.v1 import p4data_pb2, p4runtime_pb2

from p4exec.v1model.loader import load_config
from tests.support.bmv2 import needs_bmv2
from tests.support.p4rt_client import Client, U, update

PROGRAM = Path(__file__).resolve().parents[1] / "p4" / "104_digest_shapes.p4"
SOURCE = PROGRAM.read_bytes()
SRC_MAC = 0x0A0B0C0D0E0F


def frame(pick: int) -> bytes:
    """A frame whose destination's last byte `pick` chooses the digest: 1 the list, 2 the struct, 3 the field."""
    return bytes.fromhex("0200000000") + bytes([pick]) + SRC_MAC.to_bytes(6, "big") + b"\x88\xb5" + b"payload"


def digests_of_three_frames(c: Client, p4info: p4info_pb2.P4Info, send) -> dict[str, p4data_pb2.P4Data]:
    """Enable every digest (sent at once), send one frame per digest on port 3, and collect each digest's data
    by name."""
    ids = {d.preamble.id: d.preamble.name for d in p4info.digests}
    for did in ids:
        d = p4runtime_pb2.DigestEntry(digest_id=did)
        d.config.max_timeout_ns, d.config.max_list_size = 0, 1
        c.write(update(U.INSERT, digest_entry=d))
    got = {}
    for pick in (1, 2, 3):
        send(3, frame(pick))
        msg = c.get("digest", timeout=10).digest
        [data] = msg.data
        got[ids[msg.digest_id]] = data
    return got


def test_digest_data_takes_the_shape_of_its_type_spec(make_client, device) -> None:
    p4info = load_config(SOURCE).p4info
    shapes = {d.preamble.name: d.type_spec.WhichOneof("type_spec") for d in p4info.digests}
    assert shapes == {"digest_0": "tuple", "seen_t": "struct", "digest_1": "bitstring"}   # as p4c writes them
    c = make_client(election_id=1)
    c.connect()
    c.set_pipeline(p4info, SOURCE)
    got = digests_of_three_frames(c, p4info, device.inject)
    assert got["digest_0"].WhichOneof("data") == "tuple"
    assert [m.bitstring for m in got["digest_0"].tuple.members] == [bytes.fromhex("0a0b0c0d0e0f"), b"\x03"]
    assert got["seen_t"].WhichOneof("data") == "struct"
    assert [m.bitstring for m in got["seen_t"].struct.members] == [bytes.fromhex("0a0b0c0d0e0f"), b"\x03"]
    assert got["digest_1"].WhichOneof("data") == "bitstring"
    assert got["digest_1"].bitstring == b"\x88\xb5"


@pytest.mark.parametrize("target", [pytest.param("bmv2", marks=needs_bmv2)])
def test_bmv2_sends_the_same_shapes(target: str, tmp_path: Path) -> None:
    """The reference: simple_switch_grpc (its P4Runtime server converts by the type_spec) with p4c's build of the
    same program gives the same P4Data. p4c-bm2-ss 1.2.4.17 names the two anonymous learn lists in the JSON
    `tuple_0` and `digest`, not `digest_0`/`digest_1` as in its P4Info, and BMv2 then refuses to configure them
    (UNKNOWN): the P4Info handed to BMv2 carries the JSON's names, ids and type_specs unchanged."""
    from difftest.bmv2 import ReferenceSwitch
    from difftest.compile import compile_bmv2

    build = compile_bmv2(PROGRAM, tmp_path, p4info=True)
    assert build.p4info_path is not None
    p4info = text_format.Parse(build.p4info_path.read_text(), p4info_pb2.P4Info())
    learn_lists = [x["name"] for x in sorted(json.loads(build.json_path.read_text())["learn_lists"],
                                              key=lambda x: x["id"])]
    assert learn_lists == ["tuple_0", "seen_t", "digest"]
    json_name = {"digest_0": "tuple_0", "seen_t": "seen_t", "digest_1": "digest"}
    for d in p4info.digests:
        d.preamble.name = json_name[d.preamble.name]
    with ReferenceSwitch(None, device_id=1) as sw:
        c = Client(sw.grpc_addr, device_id=1, election_id=1)
        try:
            c.connect()
            c.set_pipeline(p4info, build.json_path.read_bytes())
            got = digests_of_three_frames(c, p4info, sw.packets.send)
        finally:
            c.close()
    got = {name: got[json_name[name]] for name in json_name}
    mine = load_config(SOURCE).p4info
    assert [(json_name[d.preamble.name], d.preamble.id, d.type_spec) for d in mine.digests] == \
        [(d.preamble.name, d.preamble.id, d.type_spec) for d in p4info.digests]
    assert {k: v.WhichOneof("data") for k, v in got.items()} == \
        {"digest_0": "tuple", "seen_t": "struct", "digest_1": "bitstring"}
    assert [m.bitstring for m in got["digest_0"].tuple.members] == [bytes.fromhex("0a0b0c0d0e0f"), b"\x03"]
    assert [m.bitstring for m in got["seen_t"].struct.members] == [bytes.fromhex("0a0b0c0d0e0f"), b"\x03"]
    assert got["digest_1"].bitstring == b"\x88\xb5"
