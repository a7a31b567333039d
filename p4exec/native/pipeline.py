"""The native v1model pipeline: V1Pipeline's interface (ingress/egress/process, stats) over the C of cgen.py.

The runtime objects of the DeviceState stay the one store: register and counter cells are moved into C arrays
that the same Register/Counter objects keep using (their control-plane methods read and write them), and the
tables keep their entries while a C lookup index of each (rebuilt after writes, see p4exec.runtime.changes)
answers the data plane. Traffic-manager work (multicast replication, drops) stays in Python as V1Pipeline has it.
"""
from __future__ import annotations

import logging
import random
from collections import Counter
from typing import Any

from p4exec.native import cgen
from p4exec.native.build import build
from p4exec.runtime import changes
from p4exec.runtime.match import Exact, Lpm, MatchKind, Optional_, Ternary

log = logging.getLogger("p4exec.native")

DROP_PORT = 511
REPLICATION = 5
_MAXA = 16
_rngs: dict[int, random.Random] = {}
_registered: set[int] = set()
OUT_CAP = 4096


class NativeJob:
    """A packet between ingress and egress: its C job (headers, metadata, standard metadata) and payload."""

    __slots__ = ("egress_port", "priority", "packet_length", "K", "payload", "truncate", "depth", "recirc")

    def __init__(self, egress_port: int, K: Any, payload: bytes) -> None:
        self.egress_port = egress_port
        self.K = K
        self.priority = K.sm.priority
        self.packet_length = K.sm.packet_length
        self.payload = payload
        self.truncate = None if K.truncate < 0 else K.truncate
        self.depth = 0
        self.recirc = None

    def __repr__(self) -> str:
        return f"NativeJob(port={self.egress_port}, prio={self.priority}, len={self.packet_length})"


def _rand32(h: int) -> int:
    return _rngs[h].getrandbits(32)


class NativePipeline:
    """One instance of a program on its DeviceState (see module doc)."""

    native = True

    def __init__(self, program: Any, state: Any, seed: int = 0, cprog: cgen.CProgram | None = None) -> None:
        self.program = program
        self.state = state
        self.seed = seed
        self.stats: Counter = Counter()
        self.logs: list[str] = []
        self.digest_log: list[tuple[str, tuple]] = []
        self.digest_sink = None
        self.last_malformed = False
        self.cprog = cprog if cprog is not None else cgen.generate(program)
        mod = build(self.cprog.source, self.cprog.cdef)
        self.ffi, self.lib = mod.ffi, mod.lib
        if id(mod) not in _registered:
            self.ffi.def_extern(name="p4n_rand32")(_rand32)
            _registered.add(id(mod))
        ffi = self.ffi
        self.I = ffi.new("inst_t *")
        self._rng_key = id(self)
        _rngs[self._rng_key] = random.Random(seed)
        self.I.rng_handle = self._rng_key
        self._keep: list[Any] = []
        self._tables: list[tuple[Any, Any, cgen.TableRec, Any]] = []
        for x, trec in self.cprog.tables:
            t = state.tables[x.name]
            self._check_table(t, trec)
            ct = ffi.gc(self.lib.p4n_table_new(max(1, len(t.fields)), 1 if t.needs_priority else 0),
                        self.lib.p4n_table_free)
            self.I.tbl[x.index] = ct
            self._tables.append((t, ct, trec, [-1, -1]))
        self._bind_stateful()      # last: nothing after it may decline
        self._seen = -1
        self._out = ffi.new("uint8_t[]", OUT_CAP)
        self._new = ffi.new
        self._buffer = ffi.buffer
        self._pre = state.pre
        self._sync()

    def __del__(self) -> None:
        _rngs.pop(getattr(self, "_rng_key", None), None)  # type: ignore[arg-type]

    # ------------------------------------------------------------------ state binding
    def _bind_stateful(self) -> None:
        ffi, I = self.ffi, self.I
        for x in self.cprog.registers:
            r = self.state.registers[x.name]
            if r.bitwidth > 64:
                raise cgen.Unsupported(f"register {x.name} wider than 64 bits")
            arr = ffi.new("u64[]", max(1, r.size))
            for i, v in enumerate(r.values):
                arr[i] = v
            r.values = arr
            self._keep.append(arr)
            I.reg[x.index] = arr
            I.reg_size[x.index] = r.size
            I.reg_mask[x.index] = (1 << r.bitwidth) - 1
        for x in self.cprog.counters:
            c = self.state.counters[x.name]
            p = ffi.new("u64[]", max(1, c.size))
            b = ffi.new("u64[]", max(1, c.size))
            for i in range(c.size):
                p[i] = c.packets[i]
                b[i] = c.bytes[i]
            c.packets, c.bytes = p, b
            self._keep += [p, b]
            I.cnt_p[x.index] = p
            I.cnt_b[x.index] = b
            I.cnt_size[x.index] = c.size

    @staticmethod
    def _check_table(t: Any, trec: cgen.TableRec) -> None:
        if any(f.kind is MatchKind.RANGE for f in t.fields):
            raise cgen.Unsupported(f"table {t.name}: range match")
        if t.direct_counter or t.direct_meter is not None or t.idle_timeout:
            raise cgen.Unsupported(f"table {t.name}: direct counter/meter or idle timeout")
        if any(f.bitwidth > 64 for f in t.fields):
            raise cgen.Unsupported(f"table {t.name}: key wider than 64 bits")

    def _sync(self) -> None:
        """Rebuild the C index of every table (or selector) written since the last look."""
        self._seen = changes.WRITES.n
        for t, ct, trec, gens in self._tables:
            pg = t.profile.generation if t.profile is not None else -1
            if gens[0] == t.generation and gens[1] == pg:
                continue
            self._rebuild(t, ct, trec)
            gens[0], gens[1] = t.generation, pg

    def _rebuild(self, t: Any, ct: Any, trec: cgen.TableRec) -> None:
        ffi, lib = self.ffi, self.lib
        ids = {name: i for i, name in enumerate(trec.dispatch)}
        lib.p4n_table_clear(ct)
        nk = max(1, len(t.fields))
        entries = t.entries()
        lpm = [i for i, f in enumerate(t.fields) if f.kind is MatchKind.LPM]

        def plen(e: Any) -> int:
            m = e.match[lpm[0]] if lpm else None
            return m.prefix_len if isinstance(m, Lpm) else 0
        entries.sort(key=lambda e: (-plen(e), e._seq))
        groups: dict[int, int] = {}
        val = ffi.new("u64[]", nk)
        mask = ffi.new("u64[]", nk)
        args = ffi.new("u64[]", _MAXA)
        prof = t.profile
        for e in entries:
            for i, (f, m) in enumerate(zip(t.fields, e.match, strict=True)):
                full = (1 << f.bitwidth) - 1
                if m is None:
                    val[i], mask[i] = 0, 0
                elif isinstance(m, Exact | Optional_):
                    val[i], mask[i] = m.value, full
                elif isinstance(m, Lpm):
                    pm = ((1 << m.prefix_len) - 1) << (f.bitwidth - m.prefix_len)
                    val[i], mask[i] = m.value & pm, pm
                elif isinstance(m, Ternary):
                    val[i], mask[i] = m.value & m.mask, m.mask
                else:
                    raise cgen.Unsupported(f"table {t.name}: match {m!r}")
            if not t.fields:
                val[0] = mask[0] = 0
            call = e.action
            group = -1
            if call is None and e.member_id is not None and prof is not None:
                call = prof.members[e.member_id]
            if call is None and e.group_id is not None:
                group = groups.setdefault(e.group_id, len(groups))
                act = -1
                n = 0
            else:
                act = ids[call.action] if call is not None else -1
                n = self._args(args, call.args if call is not None else ())
            lib.p4n_table_add(ct, val, mask, e.priority, e._seq, act, group, args, n)
        lib.p4n_table_finish(ct)
        d = t.default_action
        n = self._args(args, d.args if d is not None else ())
        lib.p4n_table_set_default(ct, ids[d.action] if d is not None else -1, args, n)
        if groups:
            assert prof is not None
            off, ln, acts, margs = [], [], [], []
            for gid in groups:
                g = prof.groups.get(gid)
                exp = g.expanded if g is not None else ()
                off.append(len(acts))
                ln.append(len(exp))
                for mid in exp:
                    c = prof.members[mid]
                    acts.append(ids[c.action])
                    margs.extend(list(c.args) + [0] * (_MAXA - len(c.args)))
            lib.p4n_table_set_selectors(ct, len(groups), ffi.new("int32_t[]", off), ffi.new("int32_t[]", ln),
                                        len(acts), ffi.new("int32_t[]", acts or [0]),
                                        ffi.new("u64[]", margs or [0] * _MAXA))

    @staticmethod
    def _args(buf: Any, vals: tuple[int, ...]) -> int:
        if len(vals) > _MAXA:
            raise cgen.Unsupported("more than 16 action arguments")
        for i, v in enumerate(vals):
            if v >> 64:
                raise cgen.Unsupported("action argument wider than 64 bits")
            buf[i] = v
        return len(vals)

    # ------------------------------------------------------------------ hooks (as V1Pipeline)
    def on_digest(self, name: str, vals: tuple) -> None:
        self.digest_log.append((name, vals))
        if self.digest_sink is not None:
            self.digest_sink(name, vals)

    def on_log(self, text: str) -> None:
        self.logs.append(text)

    def set_digest_sink(self, fn: Any) -> None:
        self.digest_sink = fn

    def _fault(self, K: Any, where: str) -> None:
        if K.fault == 1:
            self.stats["assert_failed"] += 1
            log.warning("assert/assume failed: packet dropped")
        else:
            self.stats["runtime_fault"] += 1
            self.stats["runtime_fault:division_by_zero"] += 1
            log.warning("p4exec: run-time fault division_by_zero in %s; packet dropped", where)

    # ------------------------------------------------------------------ ingress half
    def ingress(self, port: int, data: bytes, now_us: int) -> list[NativeJob]:
        if changes.WRITES.n != self._seen:
            self._sync()
        self.last_malformed = False
        data = bytes(data)
        K = self._new("job_t *")
        if self.lib.p4n_ingress(self.I, K, data, len(data), port, now_us) < 0:
            self._fault(K, "ingress")
            return []
        sm = K.sm
        if K.parser_err > 0:
            self.last_malformed = True
        payload = data[K.payload_off:]
        grp = sm.mcast_grp
        if grp:
            reps = self._pre.replicas(grp)
            if not reps:
                self.stats["dropped"] += 1
            jobs = []
            last = len(reps) - 1
            for i, (eport, rid) in enumerate(reps):
                if i == last:
                    k = K
                else:
                    k = self.ffi.new("job_t *")
                    self.ffi.memmove(k, K, self.ffi.sizeof("job_t"))
                k.sm.egress_rid = rid
                k.sm.instance_type = REPLICATION
                jobs.append(NativeJob(eport, k, payload))
            return jobs
        spec = sm.egress_spec
        if spec == DROP_PORT:
            self.stats["dropped"] += 1
            return []
        return [NativeJob(spec, K, payload)]

    # ------------------------------------------------------------------ egress half
    def egress(self, job: NativeJob, now_us: int, queue_info: Any = None) -> list[tuple[int, bytes]]:
        if changes.WRITES.n != self._seen:
            self._sync()
        K = job.K
        if job.truncate is not None:
            K.truncate = job.truncate
        qi = queue_info
        if qi is None:
            n = self.lib.p4n_egress(self.I, K, self._out, OUT_CAP, job.egress_port, now_us, 0, 0, 0, 0, 0)
        else:
            n = self.lib.p4n_egress(self.I, K, self._out, OUT_CAP, job.egress_port, now_us, 1, qi.enq_timestamp,
                                    qi.enq_qdepth, qi.deq_timedelta, qi.deq_qdepth)
        if n == -1:
            self.stats["dropped"] += 1
            return []
        if n < 0:
            self._fault(K, "egress")
            return []
        pkt = self._buffer(self._out, n)[:] + job.payload
        trunc = K.truncate
        if 0 <= trunc < len(pkt):
            pkt = pkt[:trunc]
        return [(job.egress_port, pkt)]

    def process(self, port: int, data: bytes, now_us: int, queue_info: Any = None) -> list[tuple[int, bytes]]:
        out: list[tuple[int, bytes]] = []
        for job in self.ingress(port, data, now_us):
            out.extend(self.egress(job, now_us, queue_info(job.egress_port) if callable(queue_info) else None))
        return out
