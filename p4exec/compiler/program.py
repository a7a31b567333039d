"""Compiled programs: P4 source -> checked program + Python code + P4Info, bound to a DeviceState."""
from __future__ import annotations

import hashlib
import json
import random
import threading
from typing import Any

from p4exec.compiler import ir
from p4exec.compiler.compile import V1_ERRORS, Compiler
from p4exec.compiler.p4info import build_p4info
from p4exec.errors import P4Error, SourceLoc
from p4exec.frontend.parser import parse_preprocessed
from p4exec.frontend.preprocess import Preprocessed, preprocess, preprocess_file
from p4exec.v1model import rt


class CompiledProgram:
    """One checked P4 program: its control-plane description, P4Info and generated Python code."""

    def __init__(self, pre: Preprocessed, info: ir.ProgramInfo, pysource: str, filename: str):
        self.pre = pre
        self.text = pre.text
        self.filename = filename
        self.info = info
        self.pysource = pysource
        self.code = compile(pysource, f"<p4exec:{filename}>", "exec")
        self.p4info = build_p4info(info)

    # ------------------------------------------------------------------ runtime state
    def new_state(self):
        from p4exec.runtime import DeviceState

        state = DeviceState.from_p4info(self.p4info)
        self.configure_state(state)
        return state

    def configure_state(self, state) -> None:
        """Tell the runtime what P4Info does not carry: selector layout/hash, defaults, initial entries."""
        from p4exec.runtime import ActionCall, HashSpec, Table
        from p4exec.runtime.match import Exact, Lpm, Optional_, Range, Ternary
        from p4exec.runtime.tables import KeyField, normalize_entry

        for t in self.info.tables.values():
            tbl = state.tables.get(t.name)
            if tbl is None:   # @hidden tables are not in P4Info
                from p4exec.runtime.match import MatchKind

                fields = [KeyField(k.name, i + 1, k.width, MatchKind.from_name(k.match_kind))
                          for i, k in enumerate(t.keys)]
                acts = {r.action.name: state.actions.get(r.action.name) for r in t.actions}
                tbl = Table(t.name, 0, fields, {k: v for k, v in acts.items() if v is not None}, size=t.size)
                state.tables[t.name] = tbl
            sel = [(i, k.width) for i, k in enumerate(t.keys) if k.match_kind == "selector"]
            if sel:
                tbl.set_selector_keys(sel, len(t.keys))
            if t.implementation:
                x = self.info.externs[t.implementation]
                prof = state.action_profiles.get(x.name)
                if prof is not None:
                    tbl.profile = prof
                    if x.kind == "action_selector":
                        prof.set_hash(HashSpec(x.algo, x.output_width))
            if t.default_action is not None:
                tbl.set_initial_default(ActionCall(t.default_action, tuple(t.default_args)), const=t.default_const)
            if t.entries:
                entries = []
                for ce in t.entries:
                    match = []
                    for m in ce.match:
                        if m is None:
                            match.append(None)
                        elif m[0] == "exact":
                            match.append(Exact(m[1]))
                        elif m[0] == "lpm":
                            match.append(Lpm(m[1], m[2]))
                        elif m[0] == "ternary":
                            match.append(Ternary(m[1], m[2]))
                        elif m[0] == "range":
                            match.append(Range(m[1], m[2]))
                        else:
                            match.append(Optional_(m[1]))
                    entries.append(normalize_entry(tbl, match, priority=ce.priority,
                                                   action=ActionCall(ce.action, tuple(ce.args))))
                tbl.add_initial_entries(entries, const=t.const_entries)

    def instantiate(self, state=None, seed: int = 0):
        from p4exec.v1model.pipeline import V1Pipeline

        return V1Pipeline(self, state if state is not None else self.new_state(), seed)

    # ------------------------------------------------------------------ namespace for the generated code
    def namespace(self, state, pipeline) -> dict[str, Any]:
        from p4exec.runtime import hashes

        ns: dict[str, Any] = {
            "_Exit": rt.P4Exit, "_ParserErr": rt.ParserErr, "_Stack": rt.Stack, "_stack_last": rt.stack_last, "_shl": rt.shl,
            "_shl_signed": rt.shl_signed, "_sat_add_signed": rt.sat_add_signed,
            "PK": pipeline.pk, "__builtins__": __builtins__,
        }
        rng = random.Random(pipeline.seed)
        pipeline.rng = rng
        too_short = V1_ERRORS.index("PacketTooShort")

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

        v1hash = hashes.v1model_hash
        hash_fields = hashes.hash_fields

        def _cksum(algo, fields, payload, width):
            if payload:
                fields = fields + ((int.from_bytes(payload, "big"), len(payload) * 8),)
            return hash_fields(algo, fields) & ((1 << width) - 1)

        for algo in ("crc32", "crc32_custom", "crc16", "crc16_custom", "identity", "csum16", "xor16"):
            fn = hashes.ALGORITHMS.get(algo, (None,))[0]
            ns[f"_hb_{algo}"] = fn if fn is not None else (lambda data, _a=algo: hashes.hash_bytes(_a, data))
        ns.update(_lookahead=_lookahead, _advance=_advance, _rand=_rand, _digest=_digest, _log=_log,
                  _assert_fail=_assert_fail, _v1hash=v1hash, _cksum=_cksum)
        kinds = {"table": state.tables, "counter": state.counters, "direct_counter": state.direct_counters,
                 "meter": state.meters, "direct_meter": state.direct_meters, "register": state.registers,
                 "action_profile": state.action_profiles, "action_selector": state.action_profiles,
                 "value_set": state.value_sets}
        for py, kind, name in self.bindings:
            obj = kinds[kind].get(name)
            if obj is None:
                raise P4Error(f"internal: runtime object {kind} {name} missing from the device state",
                              SourceLoc(self.filename, 0, 0))
            ns[py] = obj
        exec(self.code, ns)  # noqa: S102 - our own generated code
        return ns

    # ------------------------------------------------------------------ compiled form (OUT.json)
    def to_json(self) -> str:
        from google.protobuf import text_format

        return json.dumps({"format": "p4exec-compiled-1", "filename": self.filename, "program": self.text,
                           "linemap": self.pre.linemap,
                           "p4info": text_format.MessageToString(self.p4info)}, indent=1)


_cache: dict[str, CompiledProgram] = {}
_lock = threading.Lock()


def _compile_pre(pre: Preprocessed, filename: str) -> CompiledProgram:
    key = hashlib.sha256(pre.text.encode() + repr(pre.linemap).encode()).hexdigest()
    with _lock:
        hit = _cache.get(key)
    if hit is not None:
        return hit
    try:
        ast = parse_preprocessed(pre)
        c = Compiler(ast, filename)
        c.run()
        src = c.module_source()
        prog = CompiledProgram(pre, c.info, src, filename)
    except P4Error:
        raise
    except RecursionError:
        raise P4Error("program nesting too deep", SourceLoc(filename, 1, 1)) from None
    except Exception as e:  # noqa: BLE001 - a compiler bug must still come out as a located error
        loc = getattr(getattr(c, "ctx", None), "control", None) if "c" in locals() else None
        where = getattr(loc, "loc", None) or SourceLoc(filename, 1, 1)
        raise P4Error(f"internal compiler error ({type(e).__name__}: {e}); please report this program",
                      where) from None
    prog.bindings = list(c.bind)
    with _lock:
        _cache[key] = prog
    return prog


def compile_source(text: str, filename: str = "<input>", include_dirs: list[str] | None = None) -> CompiledProgram:
    return _compile_pre(preprocess(text, filename, include_dirs), filename)


def compile_file(path: str, include_dirs: list[str] | None = None) -> CompiledProgram:
    pre = preprocess_file(path, include_dirs)
    return _compile_pre(pre, path)


def load_compiled(data: bytes | str) -> CompiledProgram:
    """Load `p4exec compile`'s JSON or plain P4 source."""
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise P4Error("device config is neither UTF-8 P4 source nor p4exec JSON",
                          SourceLoc("<device_config>", 0, 0)) from None
    else:
        text = data
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            obj = json.loads(text)
        except ValueError:
            obj = None
        if isinstance(obj, dict) and "program" in obj:
            fname = obj.get("filename") or "<device_config>"
            lm = [tuple(x) for x in obj.get("linemap") or []]
            pre = Preprocessed(obj["program"], lm or [(fname, i + 1) for i in range(obj["program"].count("\n") + 1)])
            return _compile_pre(pre, fname)
    return compile_source(text, "<device_config>")


def load_device_config(data: bytes):
    """(P4Info, program bound to a fresh DeviceState) from OUT.json bytes or P4 source.

    The second item is a :class:`p4exec.harness.Harness`: ``.state``, ``.pipeline`` (with ``ingress``/
    ``egress``), ``.send(port, frame)``, ``.set_digest_sink(fn)``.
    """
    from p4exec.harness import Harness

    prog = load_compiled(data)
    h = Harness(prog)
    return prog.p4info, h
