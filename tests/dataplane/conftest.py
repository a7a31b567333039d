"""Fixtures for the data-plane tests (helpers live in tests/support/dataplane.py)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.support.dataplane import EthPlusSwitch, ethplus_source_ok, new_switch


@pytest.fixture
def make_switch() -> Callable[..., EthPlusSwitch]:
    """A factory: each call loads a fresh ethplus.p4 switch (optionally with another seed)."""
    ethplus_source_ok()
    return new_switch
