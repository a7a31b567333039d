"""What the fabric controller knows, as one value: `FabricState`.

Only the transitions in controller/fabric.py change it, each under the controller's lock; everything else
(commands, experiments, tests) reads it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from controller.client import SwitchConnection
from topologies.model import Topology


@dataclass
class InstalledState:
    """What one switch holds now: group id per candidate set, group id per destination."""

    group_ids: dict[tuple[int, ...], int] = field(default_factory=dict)
    route_group: dict[int, int] = field(default_factory=dict)
    members: set[int] = field(default_factory=set)
    entries: int = 0


@dataclass(frozen=True)
class ControllerEvent:
    """Something the controller noticed or did on its own (switch lost/recovered, port down/up)."""

    at: float  # time.monotonic()
    kind: str
    switch: str
    detail: str = ""


@dataclass
class FabricState:
    topo: Topology
    connections: dict[str, SwitchConnection] = field(default_factory=dict)
    installed: dict[str, InstalledState] = field(default_factory=dict)
    dead_links: set[int] = field(default_factory=set)  # failed links (API or carrier)
    down_switches: set[str] = field(default_factory=set)  # lost, or managed by another controller
    written: dict[str, int] = field(default_factory=dict)  # updates written per switch since start
    pushed: set[str] = field(default_factory=set)  # switches whose pipeline this controller pushed
    reconciled: dict[str, dict[str, int]] = field(default_factory=dict)  # insert/modify/delete/unchanged
    timings: dict[str, float] = field(default_factory=dict)
    events: list[ControllerEvent] = field(default_factory=list)
    recoveries: int = 0
    # (node, port) -> index of the link on that port, for port status and liveness.
    port_links: dict[tuple[str, int], int] = field(init=False)

    def __post_init__(self) -> None:
        self.port_links = {(end.owner, end.number): i for i, ln in enumerate(self.topo.links)
                           for end in (ln.a, ln.b)}

    def is_live(self, name: str) -> bool:
        return name in self.connections and name not in self.down_switches

    def live_switches(self) -> list[str]:
        return [n for n in self.connections if n not in self.down_switches]

    def all_dead_links(self) -> set[int]:
        """Links routes must avoid: failed ones and every link of a switch that is down."""
        dead = set(self.dead_links)
        for index, link in enumerate(self.topo.links):
            if link.a.owner in self.down_switches or link.b.owner in self.down_switches:
                dead.add(index)
        return dead
