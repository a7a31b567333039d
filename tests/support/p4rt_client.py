"""A thin test client: real gRPC stub, a stream with arbitration, and write helpers."""

from __future__ import annotations

import queue
import threading

import grpc
import pytest
from google.rpc import status_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

U = p4runtime_pb2.Update
END = "end of stream"  # what `get` returns once the server has closed the stream
# The servers the fixtures started (here, not in conftest: pytest imports conftest under its own name).
RUNNING: list = []


def current_server():
    """The running server of the current test (to look at the device state behind it)."""
    return RUNNING[-1]


class Client:
    def __init__(self, address: str, device_id: int = 1, election_id: int = 1, role: str = ""):
        self.channel = grpc.insecure_channel(address)
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self.device_id = device_id
        self.election_id = election_id
        self.role = role
        self._out: queue.Queue = queue.Queue()
        self.inbox: queue.Queue = queue.Queue()
        self.stream = None
        self._reader: threading.Thread | None = None

    # stream
    def connect(self, election_id: int | None = None) -> p4runtime_pb2.StreamMessageResponse:
        def requests():
            while True:
                msg = self._out.get()
                if msg is None:
                    return
                yield msg

        self.stream = self.stub.StreamChannel(requests())

        def read():
            try:
                for msg in self.stream:
                    self.inbox.put(msg)
                self.inbox.put(END)
            except grpc.RpcError as err:
                self.inbox.put(err)

        self._reader = threading.Thread(target=read, daemon=True)
        self._reader.start()
        self.arbitrate(election_id)
        return self.get("arbitration")

    def arbitrate(self, election_id: int | None = None) -> None:
        if election_id is not None:
            self.election_id = election_id
        msg = p4runtime_pb2.StreamMessageRequest()
        msg.arbitration.device_id = self.device_id
        if self.role:
            msg.arbitration.role.name = self.role
        msg.arbitration.election_id.high = self.election_id >> 64
        msg.arbitration.election_id.low = self.election_id & ((1 << 64) - 1)
        self.send(msg)

    def send(self, msg: p4runtime_pb2.StreamMessageRequest) -> None:
        self._out.put(msg)

    def get(self, kind: str | None = None, timeout: float = 3.0):
        """Next stream message (of `kind`, skipping others); raises queue.Empty on timeout."""
        while True:
            msg = self.inbox.get(timeout=timeout)
            if msg is END or isinstance(msg, grpc.RpcError) or kind is None or msg.WhichOneof("update") == kind:
                return msg

    def close(self) -> None:
        self._out.put(None)
        if self.stream is not None:
            self.stream.cancel()
        self.channel.close()

    # unary RPCs
    def write(self, *updates: p4runtime_pb2.Update, election_id: int | None = None):
        req = p4runtime_pb2.WriteRequest(device_id=self.device_id, role=self.role)
        eid = self.election_id if election_id is None else election_id
        req.election_id.high = eid >> 64
        req.election_id.low = eid & ((1 << 64) - 1)
        req.updates.extend(updates)
        return self.stub.Write(req, timeout=5)

    def read(self, *entities: p4runtime_pb2.Entity) -> list[p4runtime_pb2.Entity]:
        req = p4runtime_pb2.ReadRequest(device_id=self.device_id, entities=entities)
        return [e for resp in self.stub.Read(req, timeout=5) for e in resp.entities]

    def set_pipeline(self, p4info, device_config: bytes = b"", action=None, cookie: int = 0):
        cfg = p4runtime_pb2.SetForwardingPipelineConfigRequest
        req = cfg(device_id=self.device_id, role=self.role,
                  action=cfg.VERIFY_AND_COMMIT if action is None else action)
        req.election_id.high = self.election_id >> 64
        req.election_id.low = self.election_id & ((1 << 64) - 1)
        if p4info is not None:
            req.config.p4info.CopyFrom(p4info)
            req.config.p4_device_config = device_config
            req.config.cookie.cookie = cookie
        return self.stub.SetForwardingPipelineConfig(req, timeout=30)


def update(kind: int, **entity) -> p4runtime_pb2.Update:
    return p4runtime_pb2.Update(type=kind, entity=p4runtime_pb2.Entity(**entity))


def write_errors(err: grpc.RpcError) -> list[tuple[int, str]]:
    """(canonical_code, message) per update from the status details of a failed Write."""
    status = status_pb2.Status()
    for key, value in err.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            status.ParseFromString(value)
    out = []
    for detail in status.details:
        e = p4runtime_pb2.Error()
        if not detail.type_url and not detail.value:  # compact form of a success (big batches)
            out.append((0, ""))
            continue
        assert detail.Unpack(e)
        out.append((e.canonical_code, e.message))
    return out


def fail_code(c, *updates) -> list[int]:
    with pytest.raises(grpc.RpcError) as exc:
        c.write(*updates)
    assert exc.value.code() == grpc.StatusCode.UNKNOWN
    return [code for code, _ in write_errors(exc.value)]


def atomic_write(c, atomicity, *updates):
    req = p4runtime_pb2.WriteRequest(device_id=1, atomicity=atomicity)
    req.election_id.low = c.election_id
    req.updates.extend(updates)
    return c.stub.Write(req, timeout=5)
