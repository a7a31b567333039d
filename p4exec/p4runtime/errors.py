"""Error values of the P4Runtime server and their gRPC/status-details encoding.

Every failure inside the server is a `P4RuntimeError` carrying a gRPC code name,
so one place turns it into the status (and `p4.v1.Error` details) the spec wants.
"""

from __future__ import annotations

from dataclasses import dataclass

import grpc
from google.rpc import code_pb2, status_pb2
from p4.v1 import p4runtime_pb2

STATUS_DETAILS_KEY = "grpc-status-details-bin"
MAX_MESSAGE_CHARS = 300  # an error message never echoes a whole request (1 MiB values...)
# A gRPC client with default options drops trailing metadata above 16 KiB, and above 8 KiB with a
# probability growing with the size: the status details stay below this.
DETAILS_BUDGET = 7_500
ERROR_TYPE_URL = "type.googleapis.com/p4.v1.Error"
MAX_DETAILS_BUDGET = 4 << 20
# Request metadata by which a client with larger limits (controller/client.py) asks for more.
BUDGET_KEY = "p4exec-status-details-budget"
COMPACT_TYPE_URL = "/p4.v1.Error"  # same type for Any.Unpack (the name after the last '/'), 19 bytes less
# A failed update's detail in the compact form (Any{"/p4.v1.Error", Error{code}} in Status.details): 20 bytes;
# the status code and message take at most STATUS_OVERHEAD.
FAILURE_DETAIL = 20
STATUS_OVERHEAD = 400


class P4RuntimeError(Exception):
    """A failed operation, with the gRPC status code name the spec prescribes."""

    def __init__(self, code: str, message: str) -> None:
        if len(message) > MAX_MESSAGE_CHARS:
            message = message[:MAX_MESSAGE_CHARS - 25] + f"... ({len(message)} chars)"
        super().__init__(f"{code}: {message}")
        if code not in grpc.StatusCode.__members__:
            raise ValueError(f"unknown gRPC status code name {code!r}")
        self.code = code
        self.message = message

    @property
    def status_code(self) -> grpc.StatusCode:
        return grpc.StatusCode[self.code]


def detached(err: P4RuntimeError) -> P4RuntimeError:
    """`err` without its traceback and the exceptions it was raised from (they pin frames alive)."""
    err.__traceback__ = None
    err.__context__ = None
    err.__cause__ = None
    return err


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

    def __post_init__(self) -> None:
        # A caught exception keeps its traceback, whose frames (via f_back) hold the list of results that
        # holds it: a reference cycle per failed update. The switch's packet loop freezes the collector's
        # view each tick (gc.freeze), so such cycles were never freed (~13 KB per failed update for good).
        # Only the code and the message are needed: drop the rest.
        if self.error is not None:
            self.error = detached(self.error)


def details_budget(context: grpc.ServicerContext) -> int:
    """The client's budget for status details (BUDGET_KEY request metadata), else DETAILS_BUDGET."""
    for key, value in context.invocation_metadata() or ():
        if key == BUDGET_KEY:
            try:
                return max(DETAILS_BUDGET, min(int(value), MAX_DETAILS_BUDGET))
            except (TypeError, ValueError):
                break
    return DETAILS_BUDGET


def max_updates(budget: int) -> int:
    """The most updates a Write may carry so that, whatever fails, every failure reaches a client taking
    `budget` bytes of status details (360 with gRPC's default limits, ~210k with the largest budget)."""
    return (budget - STATUS_OVERHEAD) // FAILURE_DETAIL


def check_batch_size(count: int, budget: int) -> None:
    """RESOURCE_EXHAUSTED, before anything is applied, for a batch whose failures might not all be reported."""
    limit = max_updates(budget)
    if count > limit:
        raise P4RuntimeError(
            "RESOURCE_EXHAUSTED",
            f"a Write of {count} updates: at most {limit} per Write, so that every failure can be reported "
            f"within this client's {budget}-byte status-details budget (raise it with request metadata "
            f"{BUDGET_KEY}, up to {MAX_DETAILS_BUDGET}, with matching grpc.max_metadata_size); nothing was "
            "applied")


def batch_status(results: list[UpdateResult], message: str = "Write failure.",
                 budget: int = DETAILS_BUDGET) -> status_pb2.Status:
    """google.rpc.Status for a batch with failures: UNKNOWN + one detail per update/request, in order.

    Deliverable whatever the batch (bounded by `budget` bytes): the spec's form (one p4.v1.Error per
    update, with messages) when it fits (about 150 updates); else compact, in steps until it fits:
    the short type URL; successes as empty details (clients such as p4runtime-shell skip details that
    are not p4.v1.Error, keeping positions); messages only for the first failures that fit. Every
    failure keeps its position and code; the status message says what was left out.
    """
    errors = [_error(r) for r in results]
    failed = sum(1 for e in errors if e.canonical_code != code_pb2.OK)
    for ok_url, fail_url in ((ERROR_TYPE_URL, ERROR_TYPE_URL), (COMPACT_TYPE_URL, COMPACT_TYPE_URL),
                             ("", COMPACT_TYPE_URL)):
        status = status_pb2.Status(code=code_pb2.UNKNOWN, message=message)
        bare = []
        for err in errors:
            ok = err.canonical_code == code_pb2.OK
            value = b"" if ok else p4runtime_pb2.Error(canonical_code=err.canonical_code).SerializeToString()
            bare.append(value)
            status.details.add(type_url=ok_url if ok else fail_url, value=value)
        room = budget - status.ByteSize()
        if room < 0:
            continue
        kept = _add_messages(status, errors, bare, room - (0 if ok_url == ERROR_TYPE_URL else 200))
        if ok_url != ERROR_TYPE_URL or kept < failed:
            status.message = (f"{message} {failed} of {len(errors)} updates failed; compact details "
                              f"(gRPC metadata limit): messages of the first {kept} failures, codes of all")
        return status
    keep = max(1, len(errors) * budget // max(status.ByteSize(), 1))
    del status.details[keep:]
    status.message = (f"{message} {failed} of {len(errors)} updates failed; details for the first {keep} "
                      "updates only (gRPC metadata limit): send smaller batches")
    return status


def _error(result: UpdateResult) -> p4runtime_pb2.Error:
    err = p4runtime_pb2.Error()
    if result.error is None:
        err.canonical_code = code_pb2.OK
    else:
        err.canonical_code = canonical_code(result.error.code)
        err.message = result.error.message
    return err


def _add_messages(status: status_pb2.Status, errors: list[p4runtime_pb2.Error], bare: list[bytes],
                  room: int) -> int:
    """Put the failures' messages into the details, in order, while they fit in `room` bytes."""
    kept = 0
    for i, err in enumerate(errors):
        if err.canonical_code == code_pb2.OK or not err.message:
            continue
        full = err.SerializeToString()
        extra = len(full) - len(bare[i]) + 2  # the message, and longer length prefixes
        if extra > room:
            break
        status.details[i].value = full
        room -= extra
        kept += 1
    return kept


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
