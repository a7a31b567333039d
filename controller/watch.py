"""Background helpers of the fabric application: switch restart recovery and port status.

`SwitchWatcher`: a connection's stream ends when its switch process goes away (or another controller takes
the primary role). The watcher then routes around the switch at once (its neighbours mark the ports
towards it down and reroute), reconnects with bounded retries, re-pushes the pipeline if the switch lost it
(the cookie tells), re-populates it (full install, or a diff if the pipeline survived) and brings its links
back. One thread handles all switches, one at a time, so recoveries never race each other.

`PortMonitor`: polls every switch's port status (p4exec's queue extern `up` field) and turns changes into
`link_change` calls: the liveness flip and the reroute. It reacts to *changes* only, so a link failed
through the API while its carrier stays up is not undone.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from typing import TYPE_CHECKING

from controller.client import SwitchConnection
from controller.routing import compute_routes

if TYPE_CHECKING:
    from controller.fabric import FabricController

log = logging.getLogger("ethlab.controller.watch")

ATTEMPT_S = 2.0  # one reconnection attempt: connect + arbitration


class SwitchWatcher:
    def __init__(self, fabric: FabricController, retry_s: float = 0.5) -> None:
        self.fabric = fabric
        self.retry_s = retry_s
        self.recoveries = 0
        self._todo: queue.Queue[tuple[str, str] | None] = queue.Queue()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="switch-watcher")

    def start(self) -> SwitchWatcher:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._todo.put(None)
        if self._thread.is_alive():
            self._thread.join(timeout=4 * ATTEMPT_S)
            if self._thread.is_alive():
                log.warning("switch watcher still busy after stop (a reconciliation in progress)")

    def notify(self, conn: SwitchConnection, reason: str) -> None:
        """SwitchConnection.on_lost: runs on the stream thread, so only queue the work."""
        if not self._stop.is_set():
            self._todo.put((conn.name, reason))

    def _run(self) -> None:
        while not self._stop.is_set():
            item = self._todo.get()
            if item is None:
                return
            name, reason = item
            try:
                self._handle(name, reason)
            except Exception as err:  # noqa: BLE001 - keep watching the other switches
                self.fabric.event("recovery_failed", name, f"{type(err).__name__}: {err}")

    def _handle(self, name: str, reason: str) -> None:
        fabric = self.fabric
        if reason == "primary role lost":
            fabric.event("primary_lost", name, "another controller took over; not managed any more")
            with fabric.lock:
                fabric.down_switches.add(name)
            return
        with fabric.lock:
            if name in fabric.down_switches:
                return
            fabric.event("switch_lost", name, reason)
            fabric.down_switches.add(name)
            self._neighbour_liveness(name, up=False)
            fabric.reroute()
        conn = self._reconnect(name)
        if self._stop.is_set():  # the controller is closing: leave the switch alone
            if conn is not None:
                conn.close()
            return
        if conn is None:
            fabric.event("recovery_failed", name, f"no P4Runtime answer within {fabric.recover_timeout_s:g}s")
            return
        with fabric.lock:
            old = fabric.connections.get(name)
            if old is not None:
                old.on_lost = None
                old.close()
            fabric.connections[name] = conn
            fabric.down_switches.discard(name)
            routes = compute_routes(fabric.topo, fabric.all_dead_links())
            written = fabric._reconcile_switch(name, routes[name])
            conn.on_lost = self.notify
            self._neighbour_liveness(name, up=True)
            fabric.reroute()
            self.recoveries += 1
            fabric.event("switch_recovered", name, f"{written} updates written")

    def _reconnect(self, name: str) -> SwitchConnection | None:
        """Try until the switch answers, in short attempts so stop() is honoured within ATTEMPT_S: a watcher
        outliving its controller would otherwise adopt whatever later listens on the switch's port."""
        deadline = time.monotonic() + self.fabric.recover_timeout_s
        while not self._stop.is_set() and time.monotonic() < deadline:
            try:
                conn = self.fabric._connection(name, timeout=ATTEMPT_S)
                if conn.stream_alive() and not self._stop.is_set():
                    return conn
                conn.close()
            except Exception as err:  # noqa: BLE001 - the switch is still starting
                log.debug("reconnect %s: %s", name, err)
            self._stop.wait(self.retry_s)
        return None

    def _neighbour_liveness(self, name: str, up: bool) -> None:
        """Mark the ports that face `name` on its neighbours (links that are not failed for other reasons)."""
        fabric = self.fabric
        for port, link in fabric.topo.ports(name).items():
            far = link.other(name)
            index = fabric.port_links[(name, port)]
            if far.owner not in fabric.connections or far.owner in fabric.down_switches:
                continue
            if up and index in fabric.dead_links:
                continue
            try:
                fabric.set_port_liveness(far.owner, far.number, up)
            except Exception as err:  # noqa: BLE001 - the neighbour may be restarting too
                log.warning("liveness %s:%d: %s", far.owner, far.number, err)


class PortMonitor:
    def __init__(self, fabric: FabricController, interval_s: float) -> None:
        self.fabric = fabric
        self.interval_s = interval_s
        self.last: dict[tuple[str, int], bool] = {}
        self.polls = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="port-monitor")

    def start(self) -> PortMonitor:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.poll()

    def poll(self) -> None:
        fabric = self.fabric
        for name in fabric.live_switches():
            conn = fabric.connections.get(name)
            if conn is None or not conn.stream_alive() or self._stop.is_set():
                continue
            try:
                status = conn.port_status(timeout=5.0)  # a frozen (SIGSTOP) switch must not stall the others
            except Exception as err:  # noqa: BLE001 - a switch may be going away; the watcher handles it
                log.debug("port status %s: %s", name, err)
                continue
            for port, up in status.items():
                index = fabric.port_links.get((name, port))
                if index is None or self.last.get((name, port), True) == up:
                    self.last[(name, port)] = up
                    continue
                self.last[(name, port)] = up
                try:
                    fabric.link_change(index, up, source=f"port status {name}:{port}")
                except Exception as err:  # noqa: BLE001 - keep polling
                    fabric.event("port_change_failed", name, f"port {port}: {err}")
        self.polls += 1
