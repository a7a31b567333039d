"""Options of a real-time (emulated) run for tests that build them directly."""

from __future__ import annotations

from typing import Any

from traffic.records import DEFAULT_BURST, HostConfig, ns


def real_time(**options: Any) -> HostConfig:
    """The command line's defaults for a real-time run (loss grace 50 ms, burst 8), `options` over them."""
    return HostConfig(**{"loss_grace_ns": ns(0.05), "catch_up_frames": DEFAULT_BURST, **options})
