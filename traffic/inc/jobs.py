"""What a fabric needs before it runs a plan with in-network all-reduce: the aggregation program and the
jobs (one per collective and plane) that the controller sets up (controller/inc.py). Both clocks call this."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from traffic.inc.endpoint import CallbackClock, IncEndpoints, JobSpec

INC_PROGRAM = Path(__file__).resolve().parents[2] / "p4src" / "ethplus_inc.p4"


def needs_inc(plan: Sequence[Any]) -> bool:
    return any(pc.schedule.algorithm == "inc" for pc in plan)


def plan_jobs(plan: Sequence[Any], planes: Sequence[int]) -> list[JobSpec]:
    """The aggregation jobs of a plan (the host models number them the same way)."""
    clock = CallbackClock(lambda: 0, lambda _at, _fn: None)
    return IncEndpoints(plan, planes, clock, lambda _e, _p, _f: None, lambda _ci: None).jobs()


def setup_jobs(controller: Any, specs: Sequence[JobSpec], say: Callable[[str], None] | None = None) -> None:
    """Write every job over P4Runtime; an IncError (bad members, no slots, not the INC program) propagates."""
    for spec in specs:
        if say is not None:
            say(f"in-network aggregation job {spec.job_id}: {len(spec.members)} members on plane {spec.plane}")
        controller.inc.setup(spec.job_id, spec.members, spec.plane, spec.slots)
