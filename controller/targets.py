"""The two execution targets as values: what differs between ethlab's embedded switch and BMv2, in one place.

A `Target` bundles the switch process class, how the program is compiled for it, the side channel for what
its P4Runtime server lacks (BMv2: registers and queues over its Thrift session, controller/bmv2.py), what it can do
(`reports_port_status`) and how a link is failed on it (BMv2: never by setting one of its interfaces down, which
leaves the whole switch deaf: controller/bmv2_ports.py). Bring-up, the controller and the fault injector ask the Target
instead of comparing target names.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from controller.artifacts import (
    DEFAULT_PROGRAM,
    P4C_BMV2_TOOLCHAIN,
    P4EXEC_TOOLCHAIN,
    PipelineArtifacts,
    Toolchain,
    build_artifacts,
)
from controller.bmv2 import Bmv2SideChannel, QueueSetting, queue_settings_for
from controller.bmv2_ports import LinkEnd, set_link_state
from controller.bmv2_thrift import Bmv2ThriftError
from controller.client import SwitchConnection

if TYPE_CHECKING:  # the switch node classes need Mininet; vfabric uses targets without it
    from topologies.switches import P4Switch

QUEUE_ROLE = "p4exec.queue"  # the role p4exec's own `queue` command uses for its queue extern


class QueueChannel(Protocol):
    """Sets a switch's egress queue without the controller's session (so it works while that is down)."""

    def set_queue(self, port: int, depth: float | None = None, rate_pps: float | None = None,
                  rate_bps: float | None = None) -> None: ...


@dataclass(frozen=True)
class P4ExecQueue:
    """p4exec's queue extern over a short P4Runtime session of its own role."""

    address: str
    device_id: int
    name: str = "p4exec"
    timeout_s: float = 5.0  # how long to wait for the switch's P4Runtime server

    def set_queue(self, port: int, depth: float | None = None, rate_pps: float | None = None,
                  rate_bps: float | None = None) -> None:
        settings = {k: v for k, v in (("depth", depth), ("rate_pps", rate_pps), ("rate_bps", rate_bps))
                    if v is not None}
        conn = SwitchConnection(self.address, device_id=self.device_id, role=QUEUE_ROLE, name=self.name,
                                timeout=self.timeout_s).connect()
        try:
            conn.set_queue(port, **settings)
        finally:
            conn.close()


@dataclass(frozen=True)
class Target:
    name: str
    switch_class_name: str  # its Mininet node class in topologies/switches.py (imported only when needed)
    reports_port_status: bool  # port carrier over P4Runtime (p4exec's queue extern `up` field)
    queue_channel_for: Callable[[P4Switch], QueueChannel]
    toolchain: Toolchain  # how programs are compiled for it (controller/artifacts.py)
    versions: Callable[[], dict[str, str | None]]  # what a results directory records about the target
    takes_seed: bool = False  # the switch process accepts `--seed N` (reproducible random())
    # the channel for registers/queues beside P4Runtime: (switch, Thrift port) -> channel
    side_channel_for: Callable[[str, int | None], Bmv2SideChannel] | None = None
    on_ready: Callable[[P4Switch], None] | None = None  # configuration once the switch listens
    # how a link's ends (netns or None, interface) are failed (False) and restored (True); None: the fabric's
    # own way, both ends administratively down/up (a cable pull the switch sees as carrier loss)
    link_state: Callable[[list[LinkEnd], bool], None] | None = None
    # the fastest per-flow pace (Mbit/s of frames) its switches take here without losing frames before their
    # pipeline; None: any. Experiments above it run slowed down as a whole (pace_factor).
    max_flow_rate_mbps: float | None = None

    @property
    def switch_cls(self) -> type[P4Switch]:
        """The Mininet switch node class: imported here, so the controller and vfabric need no Mininet."""
        from topologies import switches

        cls: type[P4Switch] = getattr(switches, self.switch_class_name)
        return cls

    def compile(self, program: Path = DEFAULT_PROGRAM) -> PipelineArtifacts:
        """P4Info + device config for this target (cached in build/p4)."""
        return build_artifacts(program, self.toolchain)

    def side_channel(self, switch: str, thrift_port: int | None) -> Bmv2SideChannel | None:
        return None if self.side_channel_for is None else self.side_channel_for(switch, thrift_port)

    def pace_factor(self, flow_rate_bps: float) -> float:
        """By how much an emulated experiment's clock runs slower on this target (1.0: as specified).

        Emulation already scales link rates (`rate_scale`); a target that cannot take the spec's per-flow rate
        gets the whole fabric scaled once more by this factor (flow rates, queue rates, time limit), so queues
        and ratios stay as specified and only times stretch by 1/factor."""
        cap = self.max_flow_rate_mbps
        if cap is None or flow_rate_bps <= cap * 1e6:
            return 1.0
        return cap * 1e6 / flow_rate_bps

    def switch_params(self) -> dict[str, Any]:
        """Keyword arguments every switch node of this target gets."""
        return {"on_ready": self.on_ready} if self.on_ready is not None else {}

    def queue_channel(self, sw: P4Switch) -> QueueChannel:
        return self.queue_channel_for(sw)

    def side_ports(self, switches: dict[str, P4Switch]) -> dict[str, int]:
        """Switch -> Thrift port, for targets with a side channel."""
        if self.side_channel_for is None:
            return {}
        from topologies.switches import Bmv2Switch

        return {name: sw.thrift_port for name, sw in switches.items() if isinstance(sw, Bmv2Switch)}


def bmv2_queue_settings(sw: P4Switch) -> list[QueueSetting]:
    """A switch's configured queues as BMv2 takes them: depth for all ports, then each port's rate
    (whole packets per second, at least 1: 0 is not a rate)."""
    settings = [queue_settings_for(0, depth=sw.queue_depth)] if sw.queue_depth else []
    for port, pps in sorted(sw.queue_rates_pps.items()):
        settings.append(queue_settings_for(port, rate_pps=max(pps, 1.0)))
    return settings


def configure_bmv2_queues(sw: P4Switch, thrift_timeout: float = 15.0) -> None:
    """Set a BMv2 switch's queues over its Thrift session once its Thrift server listens."""
    from topologies.switches import Bmv2Switch, SwitchStartError

    settings = bmv2_queue_settings(sw)
    if not settings or not isinstance(sw, Bmv2Switch):
        return
    sw.wait_thrift(thrift_timeout)
    channel = Bmv2SideChannel(sw.thrift_port, name=sw.name)
    try:
        for setting in settings:
            channel.apply(setting)
    except Bmv2ThriftError as err:
        raise SwitchStartError(f"{sw.name}: setting queues: {err}") from None


def _p4exec_versions() -> dict[str, str | None]:
    try:
        return {"p4exec": metadata.version("ethlab")}  # p4exec ships inside the ethlab distribution
    except metadata.PackageNotFoundError:
        return {"p4exec": None}


def _bmv2_versions() -> dict[str, str | None]:
    try:
        res = subprocess.run(["simple_switch_grpc", "--version"], capture_output=True, text=True, timeout=10)
        return {"bmv2": (res.stdout or res.stderr).strip() or None}
    except (OSError, subprocess.SubprocessError):
        return {"bmv2": None}


def _p4exec_queue(sw: P4Switch) -> QueueChannel:
    return P4ExecQueue(sw.grpc_addr, sw.device_id, sw.name)


def _bmv2_queue(sw: P4Switch) -> QueueChannel:
    from topologies.switches import Bmv2Switch

    return Bmv2SideChannel(sw.thrift_port if isinstance(sw, Bmv2Switch) else None, name=sw.name)


P4EXEC = Target("p4exec", "P4ExecSwitch", reports_port_status=True, queue_channel_for=_p4exec_queue,
                toolchain=P4EXEC_TOOLCHAIN, versions=_p4exec_versions, takes_seed=True)
BMV2 = Target("bmv2", "Bmv2Switch", reports_port_status=False, queue_channel_for=_bmv2_queue,
              toolchain=P4C_BMV2_TOOLCHAIN, versions=_bmv2_versions,
              side_channel_for=lambda switch, port: Bmv2SideChannel(port, name=switch), on_ready=configure_bmv2_queues,
              link_state=set_link_state, max_flow_rate_mbps=2.5)
TARGETS: dict[str, Target] = {t.name: t for t in (P4EXEC, BMV2)}


def target_named(name: str) -> Target:
    try:
        return TARGETS[name]
    except KeyError:
        raise ValueError(f"unknown target {name!r} (known: {', '.join(TARGETS)})") from None
