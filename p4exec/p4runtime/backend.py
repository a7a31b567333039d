"""The seam between the P4Runtime server and the rest of p4exec: loading programs.

Everything the server needs from `p4exec.compiler` and `p4exec.harness` goes through
here (and everything it needs from `p4exec.runtime` objects through
`runtime_binding.py`), so a change of those interfaces touches these two files.
The switch process uses `Program`, `load_program` and `attach_digest_sink` too.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from p4exec.p4runtime.errors import P4RuntimeError, from_runtime

U = p4runtime_pb2.Update


@dataclass
class Program:
    """A verified pipeline: what the device commits and the server reads from."""

    p4info: p4info_pb2.P4Info
    config: bytes
    state: Any = None        # p4exec.runtime.DeviceState, or None for a control-only pipeline
    pipeline: Any = None     # the compiled program (harness-like: .send(port, data))


def _optional(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


def _runtime_errors() -> tuple[type[BaseException], ...]:
    errs = _optional("p4exec.runtime.errors")
    return (errs.RuntimeOpError,) if errs is not None else ()


def _p4_errors() -> tuple[type[BaseException], ...]:
    errs = _optional("p4exec.errors")
    return (errs.P4Error,) if errs is not None and hasattr(errs, "P4Error") else ()


def call(fn, *args, **kwargs):
    """Run a runtime operation, mapping RuntimeOpError to the server's error."""
    try:
        return fn(*args, **kwargs)
    except _runtime_errors() as exc:
        raise from_runtime(exc) from None


# -- pipelines ---------------------------------------------------------------------------------
def load_program(p4info: p4info_pb2.P4Info, device_config: bytes) -> Program:
    """Verify a pipeline config: compile the program and check it agrees with the P4Info.

    An empty device config gives a control-only pipeline (state from the P4Info, no packets).
    """
    if not device_config:
        return Program(p4info=p4info, config=b"", state=_state_from_p4info(p4info))
    compiler = _optional("p4exec.compiler")
    # a config from a client: source is compiled in a bounded worker that reads no file (p4exec.compiler.worker)
    loader = getattr(compiler, "load_untrusted_device_config", None) or getattr(compiler, "load_device_config", None)
    if loader is None:
        raise P4RuntimeError("UNIMPLEMENTED", "this p4exec build cannot compile device configs")
    try:
        loaded = loader(bytes(device_config))
    except _p4_errors() as exc:
        raise P4RuntimeError("INVALID_ARGUMENT", f"p4_device_config: {exc}") from None
    except _runtime_errors() as exc:
        raise from_runtime(exc) from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise P4RuntimeError("INVALID_ARGUMENT", f"p4_device_config: {exc}") from None
    compiled_p4info, state, pipeline = _unpack_loaded(loaded)
    if compiled_p4info is not None:
        check_p4info_agrees(p4info, compiled_p4info)
    return Program(p4info=p4info, config=bytes(device_config), state=state, pipeline=pipeline)


def _unpack_loaded(loaded: Any) -> tuple[Any, Any, Any]:
    """(p4info, state, pipeline) from what `load_device_config` returns."""
    if isinstance(loaded, tuple):
        p4info, pipeline = loaded[0], loaded[1]
        return p4info, getattr(pipeline, "state", None), pipeline
    return getattr(loaded, "p4info", None), getattr(loaded, "state", None), loaded


def _state_from_p4info(p4info: p4info_pb2.P4Info) -> Any:
    runtime = _optional("p4exec.runtime")
    cls = getattr(runtime, "DeviceState", None)
    if cls is None:
        return None
    return call(cls.from_p4info, p4info)


def _shape(p4info: p4info_pb2.P4Info) -> dict[tuple[str, int], tuple]:
    """What a controller relies on: ids, names and widths of every object."""
    shape: dict[tuple[str, int], tuple] = {}
    for t in p4info.tables:
        shape["table", t.preamble.id] = (
            t.preamble.name,
            tuple((m.id, m.name, m.bitwidth, m.match_type) for m in t.match_fields),
            tuple(sorted(r.id for r in t.action_refs)),
            t.implementation_id,
        )
    for a in p4info.actions:
        shape["action", a.preamble.id] = (
            a.preamble.name, tuple((p.id, p.name, p.bitwidth) for p in a.params))
    for sec in ("counters", "meters", "registers", "action_profiles", "direct_counters",
                "direct_meters", "digests", "value_sets"):
        for o in getattr(p4info, sec):
            extra = (getattr(o, "size", None),)
            if sec == "registers":
                extra += (o.type_spec.bitstring.bit.bitwidth,)
            shape[sec, o.preamble.id] = (o.preamble.name, *extra)
    for c in p4info.controller_packet_metadata:
        shape["cpm", c.preamble.id] = (
            c.preamble.name, tuple((m.id, m.name, m.bitwidth) for m in c.metadata))
    return shape


def check_p4info_agrees(given: p4info_pb2.P4Info, compiled: p4info_pb2.P4Info) -> None:
    """INVALID_ARGUMENT unless the pushed P4Info describes the compiled program."""
    mine, theirs = _shape(given), _shape(compiled)
    if mine == theirs:
        return
    diff = sorted(set(mine.items()) ^ set(theirs.items()), key=str)
    first = diff[0]
    raise P4RuntimeError(
        "INVALID_ARGUMENT",
        f"the P4Info does not match p4_device_config ({len(diff)} differences, "
        f"first at {first[0][0]} id {first[0][1]:#x}: {first[1][0]!r})",
    )


# -- packets -----------------------------------------------------------------------------------
def run_packet(program: Program, port: int, frame: bytes) -> list[tuple[int, bytes]]:
    pipeline = program.pipeline
    if pipeline is None or not hasattr(pipeline, "send"):
        return []
    return list(pipeline.send(port, frame))


def attach_digest_sink(program: Program, fn) -> None:
    """Route the program's digest() calls to fn(digest_id, values) if it offers a hook.

    Without a hook, digests stay in `state.digests[name].pending` and the server
    collects them itself (`Binding.drain_digests`), so either way they arrive.
    """
    for target in (program.pipeline, program.state):
        hook = getattr(target, "set_digest_sink", None)
        if hook is not None:
            hook(fn)
            return
