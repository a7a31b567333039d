"""The seam between the P4Runtime server and the rest of p4exec: loading programs.

Everything the server needs from the compiler and v1model goes through here: one loader
(`p4exec.v1model.loader`) makes the LoadedProgram a device runs; everything it needs from
`p4exec.runtime` objects goes through `runtime_binding.py`. The switch process uses `Program`,
`load_program` and `attach_digest_sink` too.
"""

from __future__ import annotations

from dataclasses import dataclass

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from p4exec.compiler.worker import untrusted_config
from p4exec.errors import P4Error
from p4exec.p4runtime.errors import P4RuntimeError, from_runtime
from p4exec.p4runtime.p4info_check import check_p4info
from p4exec.runtime import DeviceState, RuntimeOpError
from p4exec.v1model.loader import LoadedProgram, load_config

U = p4runtime_pb2.Update


@dataclass
class Program:
    """A verified pipeline: what the device commits and the server reads from."""

    p4info: p4info_pb2.P4Info
    config: bytes
    state: DeviceState
    loaded: LoadedProgram | None = None   # None: a control-only pipeline (no packets)


def call(fn, *args, **kwargs):
    """Run a runtime operation, mapping RuntimeOpError to the server's error."""
    try:
        return fn(*args, **kwargs)
    except RuntimeOpError as exc:
        raise from_runtime(exc) from None


# -- pipelines ---------------------------------------------------------------------------------
def load_program(p4info: p4info_pb2.P4Info | None, device_config: bytes, seed: int = 0) -> Program:
    """Verify a pipeline config: compile the program and check it agrees with the P4Info.

    An empty device config gives a control-only pipeline (state from the P4Info, no packets).
    Without `p4info` (the switch's command line) the compiled program's own is used. `seed`
    seeds the program's random() (--seed), as BMv2 does for its own.
    """
    if not device_config:
        if p4info is None:
            raise P4RuntimeError("INVALID_ARGUMENT", "an empty device config needs a P4Info")
        check_p4info(p4info)
        return Program(p4info=p4info, config=b"", state=call(DeviceState.from_p4info, p4info))
    try:
        # a config from a client: source is compiled in a bounded worker that reads no file
        loaded = load_config(untrusted_config(bytes(device_config)), seed)
    except P4Error as exc:
        raise P4RuntimeError("INVALID_ARGUMENT", f"p4_device_config: {exc}") from None
    except RuntimeOpError as exc:
        raise from_runtime(exc) from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise P4RuntimeError("INVALID_ARGUMENT", f"p4_device_config: {exc}") from None
    except RecursionError:
        raise P4RuntimeError("INVALID_ARGUMENT", "p4_device_config: nesting too deep") from None
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
    raise P4RuntimeError(
        "INVALID_ARGUMENT",
        f"the P4Info does not match p4_device_config ({len(diff)} differences, "
        f"first at {first[0][0]} id {first[0][1]:#x}: {first[1][0]!r})",
    )


# -- packets -----------------------------------------------------------------------------------
def run_packet(program: Program, port: int, frame: bytes) -> list[tuple[int, bytes]]:
    if program.loaded is None:
        return []
    return program.loaded.run(port, frame)


def attach_digest_sink(program: Program, fn) -> None:
    """Route the program's digest() calls to fn(digest_id, values).

    Without a program (control-only pipeline) digests stay in `state.digests[name].pending` and
    the server collects them itself (`Binding.drain_digests`), so either way they arrive.
    """
    if program.loaded is not None:
        program.loaded.pipeline.set_digest_sink(fn)
