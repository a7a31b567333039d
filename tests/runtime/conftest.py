"""Fixtures of the runtime tests."""
from __future__ import annotations

import pytest
from rt_p4info import make_p4info

from p4exec.runtime import DeviceState


@pytest.fixture
def state() -> DeviceState:
    return DeviceState.from_p4info(make_p4info())
