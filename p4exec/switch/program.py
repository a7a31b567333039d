"""A loaded program as the switch loop runs it: the pipeline halves around the traffic manager and the
liveness register.

Loading and checking a program is the device layer's (`p4exec.device.program.load_program`), so a pipeline
pushed over gRPC and one given on the command line are verified the same way and the server can read the
state of either; this module adds only what the switch loop needs of it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from p4exec.device.program import Program

# Registers the switch keeps in step with link state, by local name: value written when a port is up/down.
# `port_down` is the convention of p4src/include/port_state.p4 (1 = down, so 0 = up after a fresh load).
LIVENESS_REGISTERS = {"port_down": (0, 1), "port_up": (1, 0)}


@dataclass
class Live:
    """What the data plane runs: the committed program's halves and its liveness register."""

    program: Program
    ingress: Any = None  # pipeline.ingress(port, data, now_us) -> list[EgressJob]
    egress: Any = None  # pipeline.egress(job, now_us, queue_info) -> list[(port, bytes)]
    liveness: list = field(default_factory=list)  # [(register, value_if_up, value_if_down)]
    malformed: Callable[[], bool] = lambda: False  # did the last ingress fail to parse/process its frame?
    batch: Any = None  # the native pipeline, which takes same-instant frames in few calls (p4exec/switch/batch.py)

    def set_port_up(self, port: int, up: bool) -> None:
        for reg, if_up, if_down in self.liveness:
            try:
                reg.write(port, if_up if up else if_down)
            except Exception:  # noqa: BLE001 - port beyond the register's size: nothing to show
                pass


def make_live(program: Program) -> Live:
    """The pipeline halves of a loaded program (none for a control-only one) and its liveness register."""
    live = Live(program)
    if program.loaded is not None:
        pipeline = program.loaded.pipeline
        live.ingress, live.egress = pipeline.ingress, pipeline.egress
        live.malformed = lambda: pipeline.last_malformed
        live.batch = pipeline if hasattr(pipeline, "batch_run") else None
    for name, (if_up, if_down) in LIVENESS_REGISTERS.items():
        reg = find_register(program.state, name)
        if reg is not None:
            live.liveness.append((reg, if_up, if_down))
    return live


def find_register(state: Any, local_name: str) -> Any:
    """The register whose fully-qualified name ends in `local_name` (any control), or None."""
    regs = getattr(state, "registers", None) or {}
    for name, reg in regs.items():
        if name == local_name or name.endswith("." + local_name):
            return reg
    return None
