"""Fixtures of the runtime tests."""
from __future__ import annotations

import pytest

from p4exec.runtime import DeviceState
from tests.support.rt_p4info import make_p4info


@pytest.fixture
def state() -> DeviceState:
    return DeviceState.from_p4info(make_p4info())
