"""The globals one instance of a program's generated code runs with: helpers, externs, runtime objects.

Built per instance (each has its own state and random stream); the compiled code object is shared.
"""
from __future__ import annotations

import random
from typing import Any

from p4exec.compiler.compile import V1_ERRORS
from p4exec.compiler.program import CompiledProgram
from p4exec.errors import P4Error, SourceLoc
from p4exec.runtime import DeviceState, hashes
from p4exec.v1model import rt

_HASH_ALGOS = ("crc32", "crc32_custom", "crc16", "crc16_custom", "identity", "csum16", "xor16")
_TOO_SHORT = V1_ERRORS.index("PacketTooShort")


def build_namespace(program: CompiledProgram, state: DeviceState, pipeline: Any) -> dict[str, Any]:
    """Execute the generated module for `pipeline` (a V1Pipeline: .pk, .seed, hooks) over `state`."""
    ns: dict[str, Any] = {
        "_Exit": rt.P4Exit, "_ParserErr": rt.ParserErr, "_Stack": rt.Stack, "_stack_last": rt.stack_last,
        "_shl": rt.shl, "_shl_signed": rt.shl_signed, "_sat_add_signed": rt.sat_add_signed,
        "PK": pipeline.pk, "__builtins__": __builtins__,
    }
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

    for algo in _HASH_ALGOS:
        fn = hashes.ALGORITHMS.get(algo, (None,))[0]
        ns[f"_hb_{algo}"] = fn if fn is not None else (lambda data, _a=algo: hashes.hash_bytes(_a, data))
    ns.update(_csum16_int=rt.csum16_int, _lookahead=_lookahead, _advance=_advance, _rand=_rand, _digest=_digest, _log=_log,
              _assert_fail=_assert_fail, _v1hash=hashes.v1model_hash, _cksum=_cksum)
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
    exec(program.code, ns)  # noqa: S102 - our own generated code
    return ns
