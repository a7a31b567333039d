"""In-process harness: a LoadedProgram with a virtual clock, name-based entry helpers and observations.

It backs `p4exec stf`, the benchmarks and the tests; devices (the switch, the P4Runtime server) run the
LoadedProgram itself (`p4exec.v1model.loader`).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from p4exec.compiler.program import CompiledProgram, compile_file, compile_source
from p4exec.switch.tm import QueueInfo
from p4exec.v1model.loader import LoadedProgram, load


class Harness:
    """A LoadedProgram with a virtual clock (microseconds)."""

    def __init__(self, loaded: LoadedProgram):
        self.loaded = loaded
        self.program: CompiledProgram = loaded.compiled
        self.seed = loaded.seed
        self.pipeline = loaded.pipeline
        self.state = loaded.state
        self.p4info = loaded.p4info
        self.clock_us = 0
        self.queue_depths: dict[int, int] = {}

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_file(cls, path: str, seed: int = 0, include_dirs: list[str] | None = None) -> Harness:
        return cls(load(compile_file(str(path), include_dirs), seed))

    @classmethod
    def from_source(cls, text: str, filename: str = "<input>", seed: int = 0,
                    include_dirs: list[str] | None = None) -> Harness:
        return cls(load(compile_source(text, filename, include_dirs), seed))

    # ------------------------------------------------------------------ packets
    @property
    def ingress(self):
        return self.pipeline.ingress

    @property
    def egress(self):
        return self.pipeline.egress

    def send(self, port: int, data: bytes) -> list[tuple[int, bytes]]:
        """Run one packet through the whole v1model pipeline; the packets that leave, in order."""
        now = self.clock_us
        pipe = self.pipeline
        out: list[tuple[int, bytes]] = []
        depths = self.queue_depths
        for job in pipe.ingress(port, data, now):
            if depths:
                d = depths.get(job.egress_port, 0)
                out.extend(pipe.egress(job, now, QueueInfo(now, d, 0, d, 0) if d else None))
            else:
                out.extend(pipe.egress(job, now, None))
        return out

    def advance(self, us: int) -> int:
        self.clock_us += int(us)
        return self.clock_us

    def set_queue_depth(self, port: int, depth: int) -> None:
        """Egress sees enq_qdepth = deq_qdepth = depth for packets to `port` (0 = empty queue)."""
        if depth:
            self.queue_depths[port] = int(depth)
        else:
            self.queue_depths.pop(port, None)

    # ------------------------------------------------------------------ control plane
    def _table(self, name: str):
        t = self.state.tables.get(name)
        if t is None:
            matches = [n for n in self.state.tables if n.endswith("." + name)]
            if len(matches) == 1:
                return self.state.tables[matches[0]]
            raise KeyError(f"no table {name!r} (tables: {', '.join(sorted(self.state.tables))})")
        return t

    def _action(self, table, name: str) -> str:
        if name in table.actions:
            return name
        matches = [n for n in table.actions if n.endswith("." + name) or n == name]
        if len(matches) == 1:
            return matches[0]
        raise KeyError(f"table {table.name} has no action {name!r} (actions: {', '.join(sorted(table.actions))})")

    def action_call(self, table, action: str, params: Mapping[str, int] | tuple | list | None = None):
        from p4exec.runtime import ActionCall

        aname = self._action(table, action)
        info = table.actions[aname]
        if params is None:
            params = {}
        if isinstance(params, Mapping):
            return info.call(**{k: int(v) for k, v in params.items()})
        return ActionCall(aname, tuple(int(v) for v in params))

    def table_add(self, table: str, match: Mapping[str, Any] | tuple | list, action: str,
                  params: Mapping[str, int] | tuple | list | None = None, priority: int = 0):
        """Insert an entry; `match` maps key names (as in P4Info) to FieldMatch objects, ints (exact) or None."""
        from p4exec.runtime import Exact
        from p4exec.runtime.tables import normalize_entry

        t = self._table(table)
        if isinstance(match, Mapping):
            fm = []
            for f in t.fields:
                v = match.get(f.name)
                if v is None:
                    short = [k for k in match if f.name.endswith("." + k) or f.name.endswith(k)]
                    v = match.get(short[0]) if len(short) == 1 else None
                fm.append(Exact(v) if isinstance(v, int) else v)
            unknown = [k for k in match if not any(f.name == k or f.name.endswith(k) for f in t.fields)]
            if unknown:
                raise KeyError(f"table {t.name} has no key field(s) {unknown}")
        else:
            fm = [Exact(v) if isinstance(v, int) else v for v in match]
        entry = normalize_entry(t, fm, priority=priority, action=self.action_call(t, action, params))
        return t.insert(entry)

    def set_default(self, table: str, action: str, params: Mapping[str, int] | tuple | list | None = None):
        t = self._table(table)
        t.set_default(self.action_call(t, action, params))

    def register_read(self, name: str, index: int) -> int:
        return self._obj(self.state.registers, name).read(index)

    def register_write(self, name: str, index: int, value: int) -> None:
        self._obj(self.state.registers, name).write(index, value)

    def counter_read(self, name: str, index: int) -> tuple[int, int]:
        return self._obj(self.state.counters, name).read(index)

    def _obj(self, where: dict, name: str):
        if name in where:
            return where[name]
        matches = [n for n in where if n.endswith("." + name)]
        if len(matches) == 1:
            return where[matches[0]]
        raise KeyError(f"no object named {name!r} (have: {', '.join(sorted(where))})")

    # ------------------------------------------------------------------ observations
    @property
    def digests(self) -> list[tuple[str, tuple]]:
        return self.pipeline.digest_log

    @property
    def logs(self) -> list[str]:
        return self.pipeline.logs

    @property
    def stats(self):
        return self.pipeline.stats

    def set_digest_sink(self, fn) -> None:
        self.pipeline.set_digest_sink(fn)

    def reset(self) -> None:
        self.state.reset()
        self.clock_us = 0
