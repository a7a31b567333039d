"""DeviceMux: several devices behind one P4Runtime server, chosen by each request's `device_id`.

An in-process fabric (vfabric) runs dozens of switches in one process; one gRPC server per switch meant one
polling thread per switch, each waking several times a second and taking the interpreter lock from the
simulator. Every P4Runtime request names its device (`device_id`; a StreamChannel names it in its first
arbitration message), so one server can serve them all. Each device keeps its own `P4RuntimeService`: its own
arbitration, sessions and state. An unknown device id is answered NOT_FOUND and changes nothing (spec).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import grpc
from google.protobuf.message import DecodeError
from p4.v1 import p4runtime_pb2

from p4exec.p4runtime import wire
from p4exec.p4runtime.errors import P4RuntimeError, abort_with
from p4exec.p4runtime.service import P4RuntimeService, stream_error


class DeviceMux:
    """The P4Runtime RPCs of `handlers.add_to_server`, each handed to the service of its request's device."""

    def __init__(self, services: Iterable[P4RuntimeService]) -> None:
        self.services: dict[int, P4RuntimeService] = {}
        for svc in services:
            did = svc.device.device_id
            if did in self.services:
                raise ValueError(f"two devices with device id {did} behind one P4Runtime server")
            self.services[did] = svc

    def _service(self, device_id: int, context: grpc.ServicerContext) -> P4RuntimeService:
        svc = self.services.get(device_id)
        if svc is None:
            abort_with(context, P4RuntimeError("NOT_FOUND", f"unknown device id {device_id}"))
        assert svc is not None  # abort_with raises
        return svc

    def Capabilities(self, request, context):  # noqa: N802 - gRPC method name
        # CapabilitiesRequest names no device; every device here runs the same server code
        return next(iter(self.services.values())).Capabilities(request, context)

    def SetForwardingPipelineConfig(self, request, context):  # noqa: N802
        return self._service(request.device_id, context).SetForwardingPipelineConfig(request, context)

    def GetForwardingPipelineConfig(self, request, context):  # noqa: N802
        return self._service(request.device_id, context).GetForwardingPipelineConfig(request, context)

    def Read(self, request, context):  # noqa: N802
        yield from self._service(request.device_id, context).Read(request, context)

    def WriteRaw(self, raw: bytes, context):  # noqa: N802
        return self._service(_write_device_id(raw, context), context).WriteRaw(raw, context)

    def StreamChannel(self, request_iterator: Iterator, context):  # noqa: N802
        """Messages before the first arbitration are answered with a stream error (the device is not known
        yet); the arbitration picks the device, whose service then serves the whole stream."""
        for msg in request_iterator:
            if msg.WhichOneof("update") == "arbitration":
                svc = self._service(msg.arbitration.device_id, context)
                yield from svc.StreamChannel(_chain(msg, request_iterator), context)
                return
            yield stream_error(P4RuntimeError("FAILED_PRECONDITION", "send a MasterArbitrationUpdate first"), msg)

    def poll(self) -> None:
        for svc in self.services.values():
            svc.poll()

    def needs_fast_poll(self) -> bool:
        return any(svc.needs_fast_poll() for svc in self.services.values())

    def close(self) -> None:
        for svc in self.services.values():
            svc.close()


def _chain(first, rest: Iterator) -> Iterator:
    yield first
    yield from rest


def _write_device_id(raw: bytes, context: grpc.ServicerContext) -> int:
    """The WriteRequest's device id, read off the wire (the common case) or from the parsed request."""
    try:
        return wire.split_write(raw).device_id
    except (wire.Unusual, IndexError, UnicodeDecodeError):
        pass
    try:
        return p4runtime_pb2.WriteRequest.FromString(raw).device_id
    except (DecodeError, RecursionError):
        abort_with(context, P4RuntimeError("INVALID_ARGUMENT", "the WriteRequest does not parse"))
        raise  # not reached: abort_with raises
