"""gRPC method handlers of the P4Runtime service.

As the generated `add_P4RuntimeServicer_to_server`, except that Write receives the request's bytes:
the service reads big table writes straight from the wire (`wire.py`) instead of building protobuf
objects for every entry, and hands everything else to the protobuf classes.
"""

from __future__ import annotations

import grpc
from p4.v1 import p4runtime_pb2 as pb

from p4exec.p4runtime.service import P4RuntimeService


def add_to_server(service: P4RuntimeService, server: grpc.Server) -> None:
    handlers = {
        "Write": grpc.unary_unary_rpc_method_handler(
            service.WriteRaw, request_deserializer=None,  # bytes as they came
            response_serializer=pb.WriteResponse.SerializeToString),
        "Read": grpc.unary_stream_rpc_method_handler(
            service.Read, request_deserializer=pb.ReadRequest.FromString,
            response_serializer=pb.ReadResponse.SerializeToString),
        "SetForwardingPipelineConfig": grpc.unary_unary_rpc_method_handler(
            service.SetForwardingPipelineConfig,
            request_deserializer=pb.SetForwardingPipelineConfigRequest.FromString,
            response_serializer=pb.SetForwardingPipelineConfigResponse.SerializeToString),
        "GetForwardingPipelineConfig": grpc.unary_unary_rpc_method_handler(
            service.GetForwardingPipelineConfig,
            request_deserializer=pb.GetForwardingPipelineConfigRequest.FromString,
            response_serializer=pb.GetForwardingPipelineConfigResponse.SerializeToString),
        "StreamChannel": grpc.stream_stream_rpc_method_handler(
            service.StreamChannel, request_deserializer=pb.StreamMessageRequest.FromString,
            response_serializer=pb.StreamMessageResponse.SerializeToString),
        "Capabilities": grpc.unary_unary_rpc_method_handler(
            service.Capabilities, request_deserializer=pb.CapabilitiesRequest.FromString,
            response_serializer=pb.CapabilitiesResponse.SerializeToString),
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("p4.v1.P4Runtime", handlers),))
