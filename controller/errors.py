"""Errors the controller raises, carrying the gRPC status code the switch answered with."""

from __future__ import annotations

from dataclasses import dataclass, field

import grpc


@dataclass
class UpdateError:
    """One failed update of a batch: its index in the batch, the code name and the switch's message."""

    index: int
    code: str
    message: str


class ControllerError(Exception):
    """A P4Runtime call the switch refused."""

    def __init__(self, message: str, code: grpc.StatusCode | None = None) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class WriteError(ControllerError):
    """A Write with one or more failed updates (spec: status UNKNOWN with a p4.v1.Error per update)."""

    code: grpc.StatusCode | None
    message: str
    failures: list[UpdateError] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__(self.message, self.code)

    def __str__(self) -> str:
        if not self.failures:
            return f"{self.code.name if self.code else 'ERROR'}: {self.message}"
        parts = [f"update {f.index}: {f.code}: {f.message}" for f in self.failures]
        return "Write failed: " + "; ".join(parts)
