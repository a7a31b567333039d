"""Error values of the P4Runtime server and their gRPC/status-details encoding.

Every failure inside the server is a `P4RuntimeError` carrying a gRPC code name,
so one place turns it into the status (and `p4.v1.Error` details) the spec wants.
"""

from __future__ import annotations

from dataclasses import dataclass

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, status_pb2
from p4.v1 import p4runtime_pb2

STATUS_DETAILS_KEY = "grpc-status-details-bin"


class P4RuntimeError(Exception):
    """A failed operation, with the gRPC status code name the spec prescribes."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        if code not in grpc.StatusCode.__members__:
            raise ValueError(f"unknown gRPC status code name {code!r}")
        self.code = code
        self.message = message

    @property
    def status_code(self) -> grpc.StatusCode:
        return grpc.StatusCode[self.code]


def invalid(message: str) -> P4RuntimeError:
    return P4RuntimeError("INVALID_ARGUMENT", message)


def not_found(message: str) -> P4RuntimeError:
    return P4RuntimeError("NOT_FOUND", message)


def from_runtime(exc: Exception) -> P4RuntimeError:
    """Map `p4exec.runtime.errors.RuntimeOpError` (code name + message) to ours."""
    code = getattr(exc, "code", None)
    message = getattr(exc, "message", None) or str(exc)
    if isinstance(code, str) and code in grpc.StatusCode.__members__:
        return P4RuntimeError(code, message)
    return P4RuntimeError("INTERNAL", message)


def canonical_code(code: str) -> int:
    """The google.rpc.Code number of a code name (same numbering as gRPC)."""
    return code_pb2.Code.Value(code)


@dataclass
class UpdateResult:
    """Outcome of one update of a Write batch (None error means it succeeded)."""

    error: P4RuntimeError | None = None


def batch_status(results: list[UpdateResult], message: str = "Write failure.") -> status_pb2.Status:
    """google.rpc.Status for a batch with failures: UNKNOWN + one p4.v1.Error per update/request."""
    status = status_pb2.Status(code=code_pb2.UNKNOWN, message=message)
    for result in results:
        err = p4runtime_pb2.Error()
        if result.error is None:
            err.canonical_code = code_pb2.OK
        else:
            err.canonical_code = canonical_code(result.error.code)
            err.message = result.error.message
        detail = any_pb2.Any()
        detail.Pack(err)
        status.details.append(detail)
    return status


def abort_with(context: grpc.ServicerContext, error: P4RuntimeError) -> None:
    """End the RPC with a plain status (no details): for request-level failures."""
    context.abort(error.status_code, error.message)


def abort_with_status(context: grpc.ServicerContext, status: status_pb2.Status) -> None:
    """End the RPC with a rich status carried in `grpc-status-details-bin`."""
    context.set_trailing_metadata(((STATUS_DETAILS_KEY, status.SerializeToString()),))
    context.abort(_status_code(status.code), status.message)


def _status_code(code: int) -> grpc.StatusCode:
    for member in grpc.StatusCode:
        if member.value[0] == code:
            return member
    return grpc.StatusCode.UNKNOWN
