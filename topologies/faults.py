"""Faults on a running fabric, written once for both clocks: the plan (what, when, and its undo) and the one
injector that applies it through a small verb set (`FaultVerbs`) at instants a `FaultClock` supplies.

The emulated fabric's clock is a timer thread per instant (ethlab/experiment/faults.py) and its verbs pull
cables, cut queue rates and signal switch processes; vfabric's clock is an event on the simulator and its
verbs act on the virtual links and switches (vfabric/run.py). A fault that fails is recorded with its error;
the run goes on.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

ACTIONS = ("link_down", "link_up", "slow_link", "restore_link", "switch_stop", "switch_restart", "switch_kill",
           "controller_stop", "controller_restart")
#: what undoes an action after the fault's `for_s` (the others repeat themselves, e.g. link_up)
UNDO = {"link_down": "link_up", "slow_link": "restore_link", "switch_stop": "switch_restart",
        "controller_stop": "controller_restart"}


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

    @property
    def target(self) -> str:
        return self.switch or (f"{self.a}-{self.b}" if self.a else "controller")


@dataclass(frozen=True)
class FaultStep:
    """One action of the plan: at `at_s` after the traffic starts, do `action` with `fault`'s parameters."""

    at_s: float
    action: str
    fault: Fault


def fault_plan(faults: list[Fault]) -> list[FaultStep]:
    """Each fault, and its undo `for_s` later, in the order they are scheduled (ties keep this order)."""
    steps = []
    for f in faults:
        steps.append(FaultStep(f.at_s, f.action, f))
        if f.for_s is not None:
            steps.append(FaultStep(f.at_s + f.for_s, UNDO.get(f.action, f.action), f))
    return steps


@dataclass
class FaultEvent:
    action: str
    target: str
    at_s: float  # when it was applied, seconds after the traffic started
    control_s: float  # how long applying it took (link change: liveness + reroute)
    error: str | None = None


class FaultVerbs(Protocol):
    """What a fault may do to a running fabric. A verb returns the control plane's seconds when the fabric
    knows them (virtual time: its modelled reaction delay), None to let the clock measure the call."""

    def link_down(self, a: str, b: str) -> float | None: ...
    def link_up(self, a: str, b: str) -> float | None: ...
    def slow_link(self, a: str, b: str, rate_factor: float, rate_pps: float | None) -> float | None: ...
    def restore_link(self, a: str, b: str) -> float | None: ...
    def switch_stop(self, switch: str) -> float | None: ...
    def switch_restart(self, switch: str) -> float | None: ...
    def switch_kill(self, switch: str) -> float | None: ...
    def controller_stop(self) -> float | None: ...
    def controller_restart(self) -> float | None: ...


class FaultClock(Protocol):
    """'At time t do X' for one clock; times are seconds after the traffic starts."""

    def begin(self) -> None: ...  # the traffic starts now: time 0 of `call_at`
    def call_at(self, at_s: float, fn: Callable[..., None], *args: Any) -> None: ...
    def now_s(self) -> float: ...  # seconds since the traffic started, rounded as the clock's records are
    def mark(self) -> float: ...  # a start mark for `control_s`
    def control_s(self, mark: float, told: float | None) -> float: ...  # a verb's control-plane seconds
    def cancel(self) -> None: ...  # forget what has not fired


@dataclass
class FaultInjector:
    """Applies a fault plan on `verbs` at the instants `clock` gives, and records what happened."""

    verbs: FaultVerbs
    clock: FaultClock
    faults: list[Fault]
    events: list[FaultEvent] = field(default_factory=list)
    controller_down: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> None:
        self.clock.begin()
        for step in fault_plan(self.faults):
            self.clock.call_at(step.at_s, self.fire, step)

    def stop(self) -> list[FaultEvent]:
        """Forget what has not fired; the events so far."""
        self.clock.cancel()
        with self._lock:
            return list(self.events)

    def fire(self, step: FaultStep) -> None:
        at = self.clock.now_s()
        f = step.fault
        error = None
        told = None
        mark = self.clock.mark()
        if step.action == "controller_stop":
            with self._lock:
                self.controller_down = True
        try:
            told = self._apply(step.action, f)
        except Exception as err:  # recorded in the results; the run goes on
            error = f"{type(err).__name__}: {err}"
        control_s = self.clock.control_s(mark, told)
        with self._lock:
            if error is None and step.action == "controller_restart":
                self.controller_down = False
            self.events.append(FaultEvent(step.action, f.target, at, control_s, error))

    def _apply(self, action: str, f: Fault) -> float | None:
        v = self.verbs
        a, b, sw = f.a or "", f.b or "", f.switch or ""
        if action == "slow_link":
            return v.slow_link(a, b, f.rate_factor, f.rate_pps)
        if action in ("link_down", "link_up", "restore_link"):
            verb: Callable[..., float | None] = getattr(v, action)
            return verb(a, b)
        if action.startswith("switch"):
            return getattr(v, action)(sw)  # type: ignore[no-any-return]
        return getattr(v, action)()  # type: ignore[no-any-return]


def events_dicts(events: list[FaultEvent]) -> list[dict[str, Any]]:
    return [asdict(e) for e in events]
