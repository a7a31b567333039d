"""A virtual fabric running p4src/ethplus_inc.p4 with its controller up over P4Runtime (in-process servers)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from controller.artifacts import PipelineArtifacts, build_artifacts
from controller.policies import make_policy
from topologies.model import Topology
from vfabric.control import ControlPlane
from vfabric.fabric import FabricConfig, VirtualFabric
from vfabric.hosts import HostConfig

ROOT = Path(__file__).resolve().parents[2]
INC_PROGRAM = ROOT / "p4src" / "ethplus_inc.p4"


def inc_artifacts() -> PipelineArtifacts:
    return build_artifacts(INC_PROGRAM, "p4exec")


@contextmanager
def inc_fabric(topo: Topology, hosts: HostConfig | None = None,
               fabric: FabricConfig | None = None) -> Iterator[tuple[VirtualFabric, ControlPlane]]:
    fab = VirtualFabric(topo, fabric or FabricConfig(), hosts or HostConfig(frame_format="ethplus"))
    with ControlPlane(fab, make_policy("ecmp"), inc_artifacts()) as control:
        control.start()
        yield fab, control
