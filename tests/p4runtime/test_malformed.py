"""Malformed requests are the client's fault: INVALID_ARGUMENT, never INTERNAL (issue 34, point 4).

Garbage bytes to every RPC, an `Any` holding garbage, a Struct nested 1,000 deep, compiled JSON nested
100,000 deep or with a malformed linemap, an unknown atomicity, a P4Info-only pipeline with duplicate ids or a
negative width, and P4 source nested too deep for the compiler.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from google.protobuf import any_pb2, struct_pb2
from p4.v1 import p4runtime_pb2

from tests.support.p4rt_client import U, update

GARBAGE = b"\xff\xff\xff\xff\x0f\x0a\x80"
UNARY = ("Write", "SetForwardingPipelineConfig", "GetForwardingPipelineConfig", "Capabilities")


def _raw(channel: grpc.Channel, method: str, kind: str = "unary"):
    path = f"/p4.v1.P4Runtime/{method}"
    if kind == "unary":
        return channel.unary_unary(path, request_serializer=None, response_deserializer=None)
    if kind == "server_stream":
        return channel.unary_stream(path, request_serializer=None, response_deserializer=None)
    return channel.stream_stream(path, request_serializer=None, response_deserializer=None)


@pytest.mark.parametrize("method", UNARY)
def test_garbage_bytes_to_a_unary_rpc(server, method: str) -> None:
    with grpc.insecure_channel(server.address) as ch, pytest.raises(grpc.RpcError) as ei:
        _raw(ch, method)(GARBAGE, timeout=10)
    assert ei.value.code() == grpc.StatusCode.INVALID_ARGUMENT, ei.value


def test_garbage_bytes_to_read_and_stream(server) -> None:
    with grpc.insecure_channel(server.address) as ch:
        with pytest.raises(grpc.RpcError) as ei:
            list(_raw(ch, "Read", "server_stream")(GARBAGE, timeout=10))
        assert ei.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        with pytest.raises(grpc.RpcError) as ei:
            list(_raw(ch, "StreamChannel", "bidi")(iter([GARBAGE]), timeout=10))
        assert ei.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def _deep_struct(depth: int) -> bytes:
    """A Struct nested `depth` deep, serialized by hand (protobuf itself refuses to build one)."""
    inner = b""
    for _ in range(depth):
        value = b"\x2a" + _varint(len(inner)) + inner          # Value.struct_value (field 5)
        entry = b"\x0a\x01k" + b"\x12" + _varint(len(value)) + value  # map entry: key "k", value
        inner = b"\x0a" + _varint(len(entry)) + entry           # Struct.fields (field 1)
    return inner


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


@pytest.mark.parametrize("payload", [GARBAGE, _deep_struct(1000)], ids=["garbage", "nested-1000"])
def test_any_holding_garbage_is_invalid_argument(primary, payload: bytes) -> None:
    ent = p4runtime_pb2.Entity()
    ent.extern_entry.extern_type_id = 0x81
    ent.extern_entry.extern_id = 1
    ent.extern_entry.entry.CopyFrom(any_pb2.Any(type_url="type.googleapis.com/google.protobuf.Struct",
                                                value=payload))
    with pytest.raises(grpc.RpcError) as ei:
        primary.write(update(U.MODIFY, extern_entry=ent.extern_entry))
    from tests.support.p4rt_client import write_errors
    [(code, _msg)] = write_errors(ei.value)
    assert code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    assert struct_pb2  # the type the Any names


@pytest.mark.parametrize("config", [
    b'{"program": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    json.dumps({"program": "x", "linemap": [1, 2]}).encode(),
    json.dumps({"program": 5}).encode(),
    json.dumps({"program": "x", "linemap": [["f", -1]]}).encode(),
], ids=["nested-100000", "linemap-ints", "program-int", "linemap-negative"])
def test_malformed_compiled_json_is_invalid_argument(primary, p4info, config: bytes) -> None:
    with pytest.raises(grpc.RpcError) as ei:
        primary.set_pipeline(p4info, config)
    assert ei.value.code() == grpc.StatusCode.INVALID_ARGUMENT, ei.value.details()


def test_unknown_atomicity_is_refused(primary) -> None:
    req = p4runtime_pb2.WriteRequest(device_id=1, atomicity=42)
    req.election_id.low = primary.election_id
    with pytest.raises(grpc.RpcError) as ei:
        primary.stub.Write(req, timeout=5)
    assert ei.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "atomicity 42" in ei.value.details()


@pytest.mark.parametrize("spoil", ["duplicate-id", "negative-width", "unknown-action", "negative-size"])
def test_a_p4info_only_pipeline_is_validated(make_client, p4info, spoil: str) -> None:
    c = make_client(election_id=1)
    c.connect()
    if spoil == "duplicate-id":
        p4info.actions[1].preamble.id = p4info.actions[0].preamble.id
    elif spoil == "negative-width":
        p4info.actions[1].params[0].bitwidth = -5
    elif spoil == "unknown-action":
        p4info.tables[0].action_refs.add(id=0x01FFFFFF)
    else:
        p4info.tables[0].size = -1
    with pytest.raises(grpc.RpcError) as ei:
        c.set_pipeline(p4info)
    assert ei.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "P4Info" in ei.value.details()


def test_deep_nesting_in_p4_source_is_reported_at_its_location(tmp_path: Path) -> None:
    src = (Path(__file__).parent / "fuzz.p4").read_text()
    lines = src.splitlines()
    at = next(i for i, line in enumerate(lines) if "last_seen.write(0, 1);" in line)
    lines[at] = "if (true) {" * 500 + "last_seen.write(0, 1);" + "}" * 500
    prog = tmp_path / "deep.p4"
    prog.write_text("\n".join(lines) + "\n")
    r = subprocess.run([sys.executable, "-m", "p4exec.cli", "compile", str(prog)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert f"{prog}:{at + 1}:" in r.stderr and "nesting too deep" in r.stderr and "internal" not in r.stderr
