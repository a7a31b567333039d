"""The one loader: a compiled program -> a LoadedProgram (P4Info, its own runtime state, a v1model pipeline).

The harness, the STF runner, the switch and the P4Runtime server all run LoadedPrograms. A
CompiledProgram is compiled once (and cached by source); `instantiate` gives as many independent
instances as needed (a fabric of many switches in one process): each has its own DeviceState,
random stream and pipeline, and all share the compiled code.
"""
from __future__ import annotations

from dataclasses import dataclass

from p4.config.v1 import p4info_pb2

from p4exec.compiler.program import CompiledProgram, load_compiled
from p4exec.runtime import DeviceState
from p4exec.v1model.pipeline import V1Pipeline
from p4exec.v1model.state_setup import new_state


@dataclass(eq=False)
class LoadedProgram:
    """One runnable instance of a program."""

    compiled: CompiledProgram
    state: DeviceState
    pipeline: V1Pipeline
    seed: int = 0

    @property
    def p4info(self) -> p4info_pb2.P4Info:
        return self.compiled.p4info

    def instantiate(self, seed: int | None = None) -> LoadedProgram:
        """Another instance of the same program with fresh state (same seed unless given, same pipeline kind)."""
        kind = "python" if isinstance(self.pipeline, V1Pipeline) else "native"
        return load(self.compiled, self.seed if seed is None else seed, pipeline=kind)

    def run(self, port: int, frame: bytes, now_us: int = 0) -> list[tuple[int, bytes]]:
        """Ingress then egress with empty queues: the frames that leave (no traffic manager)."""
        return self.pipeline.process(port, frame, now_us)


def load(compiled: CompiledProgram, seed: int = 0, state: DeviceState | None = None,
         pipeline: str | None = None) -> LoadedProgram:
    """Bind `compiled` to `state` (default: a fresh one) and build its pipeline: the generated Python, or with
    `pipeline="native"` (default: p4exec.native.select's) the C one where the program and machine allow."""
    st = state if state is not None else new_state(compiled)
    from p4exec.native.select import make_pipeline

    return LoadedProgram(compiled, st, make_pipeline(compiled, st, seed, pipeline), seed)


def load_config(data: bytes | str, seed: int = 0) -> LoadedProgram:
    """A LoadedProgram from `p4exec compile` JSON or plain P4 source (a P4Runtime device config)."""
    return load(load_compiled(data), seed)
