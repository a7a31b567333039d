"""The one seam between the fabric state machine and what feeds it.

Event sources (controller/watch.py: the switch watcher, the port monitor, the probe sender) and policies see
the fabric only through `FabricEvents`: four kinds of news, each one transition of controller/fabric.py run
under its lock, and the few reads they need. They never touch the controller's state or its connections
table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from controller.client import SwitchConnection
from controller.probes import Probe
from topologies.model import Topology


class FabricEvents(Protocol):
    @property
    def topo(self) -> Topology: ...

    def live_connections(self) -> dict[str, SwitchConnection]:
        """A snapshot: switch -> its session, for switches that are up and managed."""
        ...

    def open_connection(self, switch: str, timeout: float) -> SwitchConnection:
        """A new primary session with a switch (for reconnecting); not yet adopted."""
        ...

    def note(self, kind: str, switch: str, detail: str = "") -> None:
        """Record something a source saw (e.g. a recovery that gave up)."""
        ...

    def switch_lost(self, switch: str, reason: str) -> bool:
        """The switch's stream ended; True when the source should try to bring it back."""
        ...

    def switch_back(self, switch: str, conn: SwitchConnection) -> int:
        """The switch answers again on `conn`: adopt it, reconcile; returns the updates written."""
        ...

    def port_changed(self, switch: str, port: int, up: bool) -> None:
        """The switch reports a port's carrier went up or down."""
        ...

    def probe_due(self, probes: Sequence[Probe], seq: int) -> int:
        """Send these probes (round `seq`) from the switches that are up; returns how many went out."""
        ...
