"""Building blocks of the vfabric tests: a virtual fabric with its control plane up, and one replay."""

from __future__ import annotations

from dataclasses import dataclass

from controller.policies import make_policy
from topologies.model import Topology
from traffic.metrics import Metrics, summarize
from traffic.records import HostConfig, PlannedCollective, RunResult
from vfabric.control import ControlPlane
from vfabric.fabric import FabricConfig, VirtualFabric
from vfabric.run import VirtualLimits, VirtualOutcome, VirtualRun


@dataclass
class Replayed:
    fabric: VirtualFabric
    outcome: VirtualOutcome

    @property
    def result(self) -> RunResult:
        return self.outcome.result

    @property
    def metrics(self) -> Metrics:
        return summarize(self.outcome.result)


def replay(topo: Topology, plan: list[PlannedCollective], policy: str = "ecmp", hosts: HostConfig | None = None,
           fabric: FabricConfig | None = None, limits: VirtualLimits | None = None, **policy_options) -> Replayed:
    fab = VirtualFabric(topo, fabric or FabricConfig(), hosts or HostConfig())
    with ControlPlane(fab, make_policy(policy, **policy_options)) as control:
        control.start()
        run = VirtualRun(fab, control, limits or VirtualLimits(time_limit_s=0.05))
        outcome = run.run(plan, HostConfig(flow_rate_bps=1e9))
    return Replayed(fab, outcome)
