"""Faults injected while traffic runs: link down/up, slow link (queue rate cut), switch stop/restart/kill.

A fault is data (`Fault`); `FaultInjector` fires each at its time after the traffic starts on a timer
thread and logs what it did and how long the control plane took, so the report can show recovery.
Every action is one of `RunningFabric`'s verbs. Link failures are real: the link's veths are set down as a
cable pull (the switch sees the carrier go and marks the port dead in its `port_down` register), then the
controller reroutes around the link.
"""

from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from ethlab.bringup import RunningFabric

ACTIONS = ("link_down", "link_up", "slow_link", "restore_link", "switch_stop", "switch_restart", "switch_kill",
           "controller_stop", "controller_restart")


@dataclass(frozen=True)
class Fault:
    """`at_s` after the traffic starts do `action` on link `a`–`b` or on `switch`.

    `for_s`: undo it that much later (link_up / restore_link). `rate_factor`: slow_link serves the link's
    switch queues at this fraction of their configured rate (or at `rate_pps` when given)."""

    at_s: float
    action: str
    a: str | None = None
    b: str | None = None
    switch: str | None = None
    for_s: float | None = None
    rate_factor: float = 0.1
    rate_pps: float | None = None

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise ValueError(f"fault action {self.action!r} unknown (known: {', '.join(ACTIONS)})")
        if self.action.endswith("link") or self.action.startswith("link"):
            if not (self.a and self.b):
                raise ValueError(f"fault {self.action} needs a and b (the link's two ends)")
        elif self.action.startswith("controller"):
            pass
        elif not self.switch:
            raise ValueError(f"fault {self.action} needs switch")
        if self.at_s < 0:
            raise ValueError("fault at_s must be >= 0")
        if self.for_s is not None and self.for_s <= 0:
            raise ValueError("fault for_s must be > 0")
        if self.action == "switch_kill" and self.for_s is not None:
            raise ValueError("switch_kill cannot be undone (no for_s): the process is gone")


@dataclass
class FaultEvent:
    action: str
    target: str
    at_s: float  # when it was applied, seconds after the traffic started
    control_s: float  # how long applying it took (link change: liveness + reroute)
    error: str | None = None


@dataclass
class FaultInjector:
    running: RunningFabric
    faults: list[Fault]
    events: list[FaultEvent] = field(default_factory=list)
    _timers: list[threading.Timer] = field(default_factory=list)
    _t0: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    controller_down: bool = False

    def start(self) -> None:
        self._t0 = time.monotonic()
        todo: list[tuple[float, Fault]] = []
        for f in self.faults:
            todo.append((f.at_s, f))
            if f.for_s is not None:
                undo = {"link_down": "link_up", "slow_link": "restore_link", "switch_stop": "switch_restart",
                        "controller_stop": "controller_restart"}
                todo.append((f.at_s + f.for_s, Fault(f.at_s + f.for_s, undo.get(f.action, f.action), f.a, f.b,
                                                      f.switch, rate_factor=f.rate_factor)))
        for at, fault in todo:
            timer = threading.Timer(at, self._fire, args=(fault,))
            timer.daemon = True
            self._timers.append(timer)
            timer.start()

    def stop(self) -> list[FaultEvent]:
        """Cancel what has not fired and resume any switch still frozen, so teardown and reads work."""
        for timer in self._timers:
            timer.cancel()
        for sw in list(self.running.frozen):
            self.running.thaw_switch(sw)
        if self.controller_down:
            self._do_controller_restart(Fault(0.0, "controller_restart"))
        with self._lock:
            return list(self.events)

    # ---- actions ---------------------------------------------------------------------------------------
    def _fire(self, fault: Fault) -> None:
        at = time.monotonic() - self._t0
        start = time.perf_counter()
        target = fault.switch or (f"{fault.a}-{fault.b}" if fault.a else "controller")
        error = None
        try:
            getattr(self, f"_do_{fault.action}")(fault)
        except Exception as err:  # recorded in the results; the run goes on
            error = f"{type(err).__name__}: {err}"
        event = FaultEvent(fault.action, target, round(at, 4), round(time.perf_counter() - start, 4), error)
        with self._lock:
            self.events.append(event)

    def _do_link_down(self, fault: Fault) -> None:
        self.running.link_down(fault.a or "", fault.b or "")

    def _do_link_up(self, fault: Fault) -> None:
        self.running.link_up(fault.a or "", fault.b or "")

    def _queue(self, fault: Fault, restore: bool) -> None:
        running = self.running
        for sw, port in running.link_queues(fault.a or "", fault.b or ""):
            base = running.queue_rate_pps(sw, port)
            if restore:
                pps = base
            elif fault.rate_pps is not None:
                pps = fault.rate_pps
            else:
                # An unlimited queue has no rate to cut: take the link's nominal rate in 1500-byte packets.
                link = running.topo.ports(sw)[port]
                pps = (base or link.rate_gbps * 1e9 / 12000) * fault.rate_factor
            running.set_queue(sw, port, rate_pps=max(1, round(pps)) if pps else 0)

    def _do_slow_link(self, fault: Fault) -> None:
        self._queue(fault, restore=False)

    def _do_restore_link(self, fault: Fault) -> None:
        self._queue(fault, restore=True)

    def _do_switch_stop(self, fault: Fault) -> None:
        """Freeze the switch process (SIGSTOP): its links stay up but it forwards nothing — a hung switch."""
        self.running.freeze_switch(fault.switch or "")

    def _do_switch_restart(self, fault: Fault) -> None:
        self.running.thaw_switch(fault.switch or "")

    def _do_switch_kill(self, fault: Fault) -> None:
        """SIGKILL the switch process: a crash. The controller routes around it; the trial reports it."""
        self.running.kill_switch(fault.switch or "")

    def _do_controller_stop(self, fault: Fault) -> None:
        """The controller goes away (connections closed, helpers stopped); the switches keep forwarding with
        what they hold — a headless data plane."""
        with self._lock:
            self.controller_down = True
        self.running.controller.close()

    def _do_controller_restart(self, fault: Fault) -> None:
        """A new controller incarnation adopts the running switches: reconnect, read, write only differences."""
        self.running.controller.start(reconcile=True)
        with self._lock:
            self.controller_down = False


def events_dicts(events: list[FaultEvent]) -> list[dict[str, Any]]:
    return [asdict(e) for e in events]
