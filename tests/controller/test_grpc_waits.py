"""The controller's stream readers wake once a second, not grpc's ten times (see controller/client.py)."""

from __future__ import annotations

from grpc import _common

from controller.client import STREAM_WAIT_S


def test_grpc_blocking_waits_wake_once_a_second_after_the_controller_is_imported() -> None:
    assert STREAM_WAIT_S == 1.0
    assert _common.MAXIMUM_WAIT_TIMEOUT == STREAM_WAIT_S
