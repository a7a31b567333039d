"""Fixtures for the controller tests against a real `p4exec switch`: namespaces, the switch process, a
connected primary client with the test program pushed. Everything is removed at teardown."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.artifacts import PipelineArtifacts
from controller.client import SwitchConnection
from p4exec.switch.lab import Lab
from tests.support.controller import Capture, LabSwitch, lab_artifacts


@pytest.fixture(scope="module")
def lab() -> Iterator[Lab]:
    assert os.geteuid() == 0, "the controller switch tests need root (namespaces, raw sockets)"
    with Lab(nhosts=3) as lab:
        yield lab


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> PipelineArtifacts:
    return lab_artifacts(tmp_path_factory.mktemp("p4"))


@pytest.fixture(scope="module")
def switch(lab: Lab) -> Iterator[LabSwitch]:
    sw = LabSwitch(lab)
    yield sw
    sw.close()


@pytest.fixture
def conn(switch: LabSwitch, artifacts: PipelineArtifacts) -> Iterator[SwitchConnection]:
    """A primary client with a freshly pushed pipeline (empty tables) for each test."""
    client = SwitchConnection(switch.addr, device_id=switch.device_id, p4info=artifacts.p4info, election_id=10,
                              timeout=30)
    client.connect()
    assert client.is_primary
    client.set_pipeline(artifacts.device_config)
    yield client
    client.close()


@pytest.fixture
def capture(lab: Lab, tmp_path: Path):
    started: list[Capture] = []

    def start(host: int, count: int = 0, seconds: float = 20.0) -> Capture:
        cap = Capture(lab, tmp_path, host, count, seconds)
        started.append(cap)
        return cap

    yield start
    for cap in started:
        cap.kill()
