"""Faults on the emulated fabric: the real-time clock (a timer thread per instant) and the verbs, which act
on `RunningFabric`. The plan and the injector are the clock-independent ones in topologies/faults.py.

Link failures are real: the link's veths are set down as a cable pull (the switch sees the carrier go and
marks the port dead in its `port_down` register), then the controller reroutes around the link.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from topologies.faults import ACTIONS, Fault, FaultEvent, FaultInjector, events_dicts

if TYPE_CHECKING:
    from ethlab.bringup import RunningFabric

__all__ = ["ACTIONS", "EmulatedFaults", "Fault", "FaultEvent", "FaultInjector", "WallClock", "emulated_injector",
           "events_dicts", "finish_faults"]


@dataclass
class WallClock:
    """Real time: each instant is a daemon timer thread started when the traffic starts."""

    _t0: float = field(default_factory=time.monotonic)
    _timers: list[threading.Timer] = field(default_factory=list)

    def begin(self) -> None:
        self._t0 = time.monotonic()

    def call_at(self, at_s: float, fn: Callable[..., None], *args: Any) -> None:
        timer = threading.Timer(at_s, fn, args=args)
        timer.daemon = True
        self._timers.append(timer)
        timer.start()

    def now_s(self) -> float:
        return round(time.monotonic() - self._t0, 4)

    def mark(self) -> float:
        return time.perf_counter()

    def control_s(self, mark: float, told: float | None) -> float:
        return round(time.perf_counter() - mark, 4)  # the whole call: liveness, reroute, waiting

    def cancel(self) -> None:
        for timer in self._timers:
            timer.cancel()


@dataclass
class EmulatedFaults:
    """The fault verbs on a running emulated fabric."""

    running: RunningFabric

    def link_down(self, a: str, b: str) -> None:
        self.running.link_down(a, b)

    def link_up(self, a: str, b: str) -> None:
        self.running.link_up(a, b)

    def _queues(self, a: str, b: str, factor: float | None, rate_pps: float | None) -> None:
        running = self.running
        for sw, port in running.link_queues(a, b):
            base = running.queue_rate_pps(sw, port)
            if factor is None:
                pps = base
            elif rate_pps is not None:
                pps = rate_pps
            else:
                # An unlimited queue has no rate to cut: take the link's nominal rate in 1500-byte packets.
                link = running.topo.ports(sw)[port]
                pps = (base or link.rate_gbps * 1e9 / 12000) * factor
            running.set_queue(sw, port, rate_pps=max(1, round(pps)) if pps else 0)

    def slow_link(self, a: str, b: str, rate_factor: float, rate_pps: float | None) -> None:
        self._queues(a, b, rate_factor, rate_pps)

    def restore_link(self, a: str, b: str) -> None:
        self._queues(a, b, None, None)

    def switch_stop(self, switch: str) -> None:
        """Freeze the switch process (SIGSTOP): its links stay up but it forwards nothing — a hung switch."""
        self.running.freeze_switch(switch)

    def switch_restart(self, switch: str) -> None:
        self.running.thaw_switch(switch)

    def switch_kill(self, switch: str) -> None:
        """SIGKILL the switch process: a crash. The controller routes around it; the trial reports it."""
        self.running.kill_switch(switch)

    def controller_stop(self) -> None:
        """The controller goes away (connections closed, helpers stopped); the switches keep forwarding with
        what they hold — a headless data plane."""
        self.running.controller.close()

    def controller_restart(self) -> None:
        """A new controller incarnation adopts the running switches: reconnect, read, write only differences."""
        self.running.controller.start(reconcile=True)


def emulated_injector(running: RunningFabric, faults: list[Fault]) -> FaultInjector:
    """An injector whose clock starts now (call `start()` when the traffic starts)."""
    return FaultInjector(EmulatedFaults(running), WallClock(), list(faults))


def finish_faults(injector: FaultInjector, running: RunningFabric) -> list[FaultEvent]:
    """Cancel what has not fired and resume any switch still frozen and the controller, so reads and
    teardown work."""
    events = injector.stop()
    for sw in list(running.frozen):
        running.thaw_switch(sw)
    if injector.controller_down:
        running.controller.start(reconcile=True)
    return events
