"""Loading a pipeline: a device config (p4exec JSON or P4 source) and its P4Info become a verified `Program`.

One loader for every way a program arrives (SetForwardingPipelineConfig, `p4exec switch PROGRAM`, tests and
benchmarks), so each is compiled and checked the same way. Problems raise `RuntimeOpError` with the status
code the P4Runtime spec prescribes (INVALID_ARGUMENT); the server maps it, a command line prints it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from p4.config.v1 import p4info_pb2

from p4exec.compiler.worker import untrusted_config
from p4exec.device.p4info_check import check_p4info
from p4exec.errors import P4Error
from p4exec.runtime import DeviceState, RuntimeOpError
from p4exec.v1model.loader import LoadedProgram, load_config


@dataclass
class Program:
    """A verified pipeline: what a device commits and the server reads from."""

    p4info: p4info_pb2.P4Info
    config: bytes
    state: DeviceState
    loaded: LoadedProgram | None = None   # None: a control-only pipeline (no packets)


def load_program(device_config: bytes, p4info: p4info_pb2.P4Info | None = None, seed: int = 0) -> Program:
    """Verify a pipeline config: compile the program and check it agrees with the P4Info.

    An empty device config gives a control-only pipeline (state from the P4Info, no packets).
    Without `p4info` (a command line) the compiled program's own is used. `seed` seeds the program's
    random() (--seed), as BMv2 does for its own.
    """
    if not device_config:
        if p4info is None:
            raise RuntimeOpError("INVALID_ARGUMENT", "an empty device config needs a P4Info")
        check_p4info(p4info)
        return Program(p4info=p4info, config=b"", state=DeviceState.from_p4info(p4info))
    try:
        # a config from a client: source is compiled in a bounded worker that reads no file
        loaded = load_config(untrusted_config(bytes(device_config)), seed)
    except P4Error as exc:
        raise RuntimeOpError("INVALID_ARGUMENT", f"p4_device_config: {exc}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise RuntimeOpError("INVALID_ARGUMENT", f"p4_device_config: {exc}") from None
    except RecursionError:
        raise RuntimeOpError("INVALID_ARGUMENT", "p4_device_config: nesting too deep") from None
    if p4info is None:
        p4info = loaded.p4info
    else:
        check_p4info(p4info)
        check_p4info_agrees(p4info, loaded.p4info)
    return Program(p4info=p4info, config=bytes(device_config), state=loaded.state, loaded=loaded)


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
            extra: tuple = (getattr(o, "size", None),)
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
    raise RuntimeOpError(
        "INVALID_ARGUMENT",
        f"the P4Info does not match p4_device_config ({len(diff)} differences, "
        f"first at {first[0][0]} id {first[0][1]:#x}: {first[1][0]!r})",
    )


def run_packet(program: Program, port: int, frame: bytes) -> list[tuple[int, bytes]]:
    """The whole pipeline with empty queues (no traffic manager): the in-process device's data path."""
    if program.loaded is None:
        return []
    return program.loaded.run(port, frame)


def attach_digest_sink(program: Program, fn: Callable[[int, list], None]) -> None:
    """Route the program's digest() calls to fn(digest_id, values).

    Without a program (control-only pipeline) digests stay in `state.digests[name].pending` and
    the server collects them itself (`Binding.drain_digests`), so either way they arrive.
    """
    if program.loaded is not None:
        program.loaded.pipeline.set_digest_sink(fn)
