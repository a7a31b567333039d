"""Event sources of the fabric application: threads that notice things and tell the fabric through
`FabricEvents` (controller/events.py). None of them changes the fabric's state; controller/fabric.py does.

`SwitchWatcher`: a connection's stream ends when its switch process goes away (or another controller takes
the primary role). The watcher reports the switch lost (the fabric routes around it at once), reconnects
with bounded retries and reports it back on the new session (the fabric re-pushes the pipeline if it was
lost, re-populates it and brings its links back). One thread handles all switches, one at a time, so
recoveries never race each other.

`PortMonitor`: polls every live switch's port status (p4exec's queue extern `up` field) and reports
*changes* only, so a link failed through the API while its carrier stays up is not undone.

`ProbeSender`: says when a round of the adaptive policy's probes is due (controller/probes.py plans them).
"""

from __future__ import annotations

import logging
import queue
import threading
import time

from controller.client import SwitchConnection
from controller.events import FabricEvents
from controller.probes import probe_plan

log = logging.getLogger("ethlab.controller.watch")

ATTEMPT_S = 2.0  # one reconnection attempt: connect + arbitration


class SwitchWatcher:
    def __init__(self, fabric: FabricEvents, recover_timeout_s: float = 60.0, retry_s: float = 0.5) -> None:
        self.fabric = fabric
        self.recover_timeout_s = recover_timeout_s
        self.retry_s = retry_s
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
                self.fabric.note("recovery_failed", name, f"{type(err).__name__}: {err}")

    def _handle(self, name: str, reason: str) -> None:
        if not self.fabric.switch_lost(name, reason):
            return
        conn = self._reconnect(name)
        if self._stop.is_set():  # the controller is closing: leave the switch alone
            if conn is not None:
                conn.close()
            return
        if conn is None:
            self.fabric.note("recovery_failed", name, f"no P4Runtime answer within {self.recover_timeout_s:g}s")
            return
        self.fabric.switch_back(name, conn)

    def _reconnect(self, name: str) -> SwitchConnection | None:
        """Try until the switch answers, in short attempts so stop() is honoured within ATTEMPT_S: a watcher
        outliving its controller would otherwise adopt whatever later listens on the switch's port."""
        deadline = time.monotonic() + self.recover_timeout_s
        while not self._stop.is_set() and time.monotonic() < deadline:
            try:
                conn = self.fabric.open_connection(name, timeout=ATTEMPT_S)
                if conn.stream_alive() and not self._stop.is_set():
                    return conn
                conn.close()
            except Exception as err:  # noqa: BLE001 - the switch is still starting
                log.debug("reconnect %s: %s", name, err)
            self._stop.wait(self.retry_s)
        return None


class PortMonitor:
    def __init__(self, fabric: FabricEvents, interval_s: float) -> None:
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
        for name, conn in self.fabric.live_connections().items():
            if not conn.stream_alive() or self._stop.is_set():
                continue
            try:
                status = conn.port_status(timeout=5.0)  # a frozen (SIGSTOP) switch must not stall the others
            except Exception as err:  # noqa: BLE001 - a switch may be going away; the watcher handles it
                log.debug("port status %s: %s", name, err)
                continue
            for port, up in status.items():
                was = self.last.get((name, port), True)
                self.last[(name, port)] = up
                if was != up:
                    self.fabric.port_changed(name, port, up)
        self.polls += 1


class ProbeSender:
    """Every `interval_s`, a round of at most `max_per_round` probes of the plan is due (a large fabric is
    covered over several rounds), until stopped."""

    def __init__(self, fabric: FabricEvents, interval_s: float, max_per_round: int = 2000) -> None:
        self.fabric = fabric
        self.interval_s = interval_s
        self.max_per_round = max_per_round
        self.plan = probe_plan(fabric.topo)
        self.sent = 0
        self.rounds = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="probe-sender")

    def start(self) -> ProbeSender:
        if self.plan:
            self._thread.start()
        return self

    def _run(self) -> None:
        cursor = 0
        while not self._stop.is_set():
            batch = [self.plan[(cursor + i) % len(self.plan)] for i in range(min(self.max_per_round, len(self.plan)))]
            cursor = (cursor + len(batch)) % len(self.plan)
            self.sent += self.fabric.probe_due(batch, self.rounds)
            self.rounds += 1
            self._stop.wait(self.interval_s)

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2)
