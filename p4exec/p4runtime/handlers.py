"""gRPC method handlers of the P4Runtime service.

As the generated `add_P4RuntimeServicer_to_server`, except that every request arrives as bytes: Write is
read straight from the wire (`wire.py`) instead of building protobuf objects for every entry, and every other
request is parsed here, so that bytes that are not the request (or nest deeper than protobuf allows) are
answered INVALID_ARGUMENT — gRPC's own deserializer would answer INTERNAL.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import grpc
from google.protobuf.message import DecodeError
from p4.v1 import p4runtime_pb2 as pb

from p4exec.p4runtime.mux import DeviceMux
from p4exec.p4runtime.service import P4RuntimeService

MALFORMED = (DecodeError, RecursionError, UnicodeDecodeError, ValueError)


def _parse(cls, raw: bytes, context: grpc.ServicerContext):
    try:
        return cls.FromString(raw)
    except MALFORMED:
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"the {cls.DESCRIPTOR.name} does not parse")


def _unary(fn: Callable, cls) -> Callable:
    def handle(raw: bytes, context: grpc.ServicerContext):
        return fn(_parse(cls, raw, context), context)
    return handle


def _server_stream(fn: Callable, cls) -> Callable:
    def handle(raw: bytes, context: grpc.ServicerContext):
        yield from fn(_parse(cls, raw, context), context)
    return handle


def _bidi(fn: Callable, cls) -> Callable:
    """Messages parsed one by one; one that does not parse ends the input and the stream INVALID_ARGUMENT."""
    def handle(raws: Iterator[bytes], context: grpc.ServicerContext):
        bad: list[str] = []

        def messages():
            for raw in raws:
                try:
                    yield cls.FromString(raw)
                except MALFORMED:
                    bad.append(f"a {cls.DESCRIPTOR.name} does not parse")
                    return

        yield from fn(messages(), context)
        if bad:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, bad[0])
    return handle


def add_to_server(service: P4RuntimeService | DeviceMux, server: grpc.Server) -> None:
    """One device's service, or a `DeviceMux` of several (one server for all devices of a process)."""
    handlers = {
        "Write": grpc.unary_unary_rpc_method_handler(
            service.WriteRaw, request_deserializer=None,  # bytes as they came
            response_serializer=pb.WriteResponse.SerializeToString),
        "Read": grpc.unary_stream_rpc_method_handler(
            _server_stream(service.Read, pb.ReadRequest),
            response_serializer=pb.ReadResponse.SerializeToString),
        "SetForwardingPipelineConfig": grpc.unary_unary_rpc_method_handler(
            _unary(service.SetForwardingPipelineConfig, pb.SetForwardingPipelineConfigRequest),
            response_serializer=pb.SetForwardingPipelineConfigResponse.SerializeToString),
        "GetForwardingPipelineConfig": grpc.unary_unary_rpc_method_handler(
            _unary(service.GetForwardingPipelineConfig, pb.GetForwardingPipelineConfigRequest),
            response_serializer=pb.GetForwardingPipelineConfigResponse.SerializeToString),
        "StreamChannel": grpc.stream_stream_rpc_method_handler(
            _bidi(service.StreamChannel, pb.StreamMessageRequest),
            response_serializer=pb.StreamMessageResponse.SerializeToString),
        "Capabilities": grpc.unary_unary_rpc_method_handler(
            _unary(service.Capabilities, pb.CapabilitiesRequest),
            response_serializer=pb.CapabilitiesResponse.SerializeToString),
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("p4.v1.P4Runtime", handlers),))
