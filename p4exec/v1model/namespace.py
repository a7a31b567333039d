"""The globals one instance of a program's generated code runs with: helpers, externs, runtime objects.

Built per instance (each has its own state and random stream); the compiled code objects are shared, and so
are the generated header/struct classes: they are made once per program (`_shared_types`). Classes made per
instance would be different types for every switch, and CPython's specialised attribute loads and stores
(which check the type) would miss each time a packet goes to another switch than the last one: a fabric of
48 switches ran its pipelines 2.5x slower than one switch did.
"""
from __future__ import annotations

import random
import threading
import weakref
from types import CodeType
from typing import Any

from p4exec.compiler.compile import V1_ERRORS
from p4exec.compiler.program import CompiledProgram
from p4exec.errors import P4Error, SourceLoc
from p4exec.runtime import DeviceState, hashes
from p4exec.v1model import rt

_HASH_ALGOS = ("crc32", "crc32_custom", "crc16", "crc16_custom", "identity", "csum16", "xor16")
_TOO_SHORT = V1_ERRORS.index("PacketTooShort")


#: What the generated code finds in every instance's globals and may share between instances.
_COMMON: dict[str, Any] = {
    "_Exit": rt.P4Exit, "_ParserErr": rt.ParserErr, "_Stack": rt.Stack, "_stack_last": rt.stack_last,
    "_shl": rt.shl, "_shl_signed": rt.shl_signed, "_sat_add_signed": rt.sat_add_signed,
    "__builtins__": __builtins__, "_csum16_int": rt.csum16_int, "_v1hash": hashes.v1model_hash,
}
for _algo in _HASH_ALGOS:
    _fn = hashes.ALGORITHMS.get(_algo, (None,))[0]
    _COMMON[f"_hb_{_algo}"] = _fn if _fn is not None else (lambda data, _a=_algo: hashes.hash_bytes(_a, data))
_shared: weakref.WeakKeyDictionary[CompiledProgram, dict[str, Any] | None] = weakref.WeakKeyDictionary()
_shared_lock = threading.Lock()


def _global_names(code: CodeType) -> set[str]:
    """Every name `code` and the code nested in it may look up (a superset of its globals)."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, CodeType):
            names |= _global_names(const)
    return names


def _shared_types(program: CompiledProgram) -> dict[str, Any] | None:
    """The prelude and classes of `program`, run once; None when they name anything an instance binds (then
    each instance runs them itself, as before)."""
    with _shared_lock:
        if program in _shared:
            return _shared[program]
        instance_names = {py for py, _kind, _name in program.bindings} | _PER_INSTANCE
        ns: dict[str, Any] | None = None
        if not _global_names(program.types_code) & instance_names:
            ns = dict(_COMMON)
            exec(program.types_code, ns)  # noqa: S102 - our own generated code
        _shared[program] = ns
        return ns


#: Names each instance binds for itself (with its packet context, random stream, digest and log sinks).
_PER_INSTANCE = {"PK", "_lookahead", "_advance", "_rand", "_digest", "_log", "_assert_fail", "_cksum"}


def build_namespace(program: CompiledProgram, state: DeviceState, pipeline: Any) -> dict[str, Any]:
    """Execute the generated module for `pipeline` (a V1Pipeline: .pk, .seed, hooks) over `state`."""
    shared = _shared_types(program)
    ns: dict[str, Any] = dict(_COMMON) if shared is None else dict(shared)
    ns["PK"] = pipeline.pk
    rng = random.Random(pipeline.seed)
    pipeline.rng = rng
    too_short = _TOO_SHORT

    def _lookahead(data, off, w):
        nb = (w + 7) >> 3
        if off + nb > len(data):
            raise rt.ParserErr(too_short)
        return int.from_bytes(data[off:off + nb], "big") >> (nb * 8 - w)

    def _advance(n, off, bits):
        nb = (bits + 7) >> 3
        if off + nb > n:
            raise rt.ParserErr(too_short)
        return off + nb

    def _rand(lo, hi):
        if hi < lo:
            return lo
        return lo + rng.getrandbits(32) % (hi - lo + 1)

    digests = state.digests

    def _digest(name, vals):
        # with a sink attached (the P4Runtime server) the sink gets it; otherwise it waits in the state
        if pipeline.digest_sink is None:
            d = digests.get(name)
            if d is not None:
                d.emit(vals)
        pipeline.on_digest(name, vals)

    def _log(msg, vals):
        pipeline.on_log(rt.format_log(msg, vals))

    def _assert_fail(where):
        raise rt.P4AssertError(where)

    hash_fields = hashes.hash_fields

    def _cksum(algo, fields, payload, width):
        if payload:
            fields = fields + ((int.from_bytes(payload, "big"), len(payload) * 8),)
        return hash_fields(algo, fields) & ((1 << width) - 1)

    ns.update(_lookahead=_lookahead, _advance=_advance, _rand=_rand, _digest=_digest, _log=_log,
              _assert_fail=_assert_fail, _cksum=_cksum)
    kinds: dict[str, dict[str, Any]] = {
        "table": state.tables, "counter": state.counters, "direct_counter": state.direct_counters,
        "meter": state.meters, "direct_meter": state.direct_meters, "register": state.registers,
        "action_profile": state.action_profiles, "action_selector": state.action_profiles,
        "value_set": state.value_sets}
    for py, kind, name in program.bindings:
        obj = kinds[kind].get(name)
        if obj is None:
            raise P4Error(f"internal: runtime object {kind} {name} missing from the device state",
                          SourceLoc(program.filename, 0, 0))
        ns[py] = obj
    if shared is None:
        exec(program.types_code, ns)  # noqa: S102 - our own generated code
    exec(program.code, ns)  # noqa: S102
    return ns
