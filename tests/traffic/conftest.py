"""Fixtures: switchless labs of network namespaces (prefix `ethtr-`), always removed afterwards."""

from __future__ import annotations

import os
import secrets

import pytest

from traffic.vethlab import VethLab


def _lab(hosts: int, bridge: bool = True):
    if os.geteuid() != 0:
        pytest.fail("the traffic engine tests need root for network namespaces")
    lab = VethLab(f"ethtr-{secrets.token_hex(2)}-", hosts, bridge=bridge)
    ports = lab.up()
    return lab, ports


@pytest.fixture(scope="module")
def bridge_lab():
    """Four host namespaces on a Linux bridge in a fifth namespace."""
    lab, ports = _lab(4)
    try:
        yield lab, ports
    finally:
        lab.down()


@pytest.fixture
def pair_lab():
    """Two host namespaces joined directly by one veth pair."""
    lab, ports = _lab(2, bridge=False)
    try:
        yield lab, ports
    finally:
        lab.down()
