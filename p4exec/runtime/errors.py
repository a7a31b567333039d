"""The one error type of runtime state operations, carrying a gRPC status code name."""
from __future__ import annotations

CODES = frozenset({
    "ALREADY_EXISTS", "NOT_FOUND", "INVALID_ARGUMENT", "OUT_OF_RANGE", "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION", "PERMISSION_DENIED", "UNIMPLEMENTED", "INTERNAL",
})


class RuntimeOpError(Exception):
    """A rejected control-plane operation; ``code`` is a ``grpc.StatusCode`` name.

    Raised before any state is touched, so a rejected operation changes nothing; the P4Runtime server maps
    ``code`` onto the status / ``p4.v1.Error`` the spec prescribes.
    """

    def __init__(self, code: str, message: str):
        if code not in CODES:
            raise ValueError(f"unknown status code {code!r}")
        self.code = code
        self.message = message
        super().__init__(f"{code}: {message}")


def invalid(msg: str) -> RuntimeOpError:
    return RuntimeOpError("INVALID_ARGUMENT", msg)
