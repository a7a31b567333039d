"""The native v1model pipeline: V1Pipeline's interface (ingress/egress/process, stats) over the C of cgen.py.

The runtime objects of the DeviceState stay the one store: register and counter cells are moved into C arrays
that the same Register/Counter objects keep using (their control-plane methods read and write them), and the
tables keep their entries while a C lookup index of each (rebuilt after writes, see p4exec.runtime.changes)
answers the data plane. Traffic-manager work (multicast replication, drops) stays in Python as V1Pipeline has it.
"""
from __future__ import annotations

import logging
import random
import time
import weakref
from collections import Counter
from typing import Any

from p4exec.native import cgen, wide
from p4exec.native.build import build
from p4exec.runtime import changes
from p4exec.runtime.match import Exact, Lpm, MatchKind, Optional_, Range, Ternary
from p4exec.v1model import rt

log = logging.getLogger("p4exec.native")

DROP_PORT = 511
INGRESS_CLONE, EGRESS_CLONE, RECIRC, REPLICATION, RESUBMIT = 1, 2, 4, 5, 6
LOOP_CAP = 16   # resubmit/recirculate passes per packet before the packet is dropped (as V1Pipeline)
_MAXA = 16


def _key_words(t: Any) -> int:
    """The u64 words of a table's key in the C index (a field wider than 64 bits takes two)."""
    return max(1, sum(wide.words(f.bitwidth) for f in t.fields))
_rngs: dict[int, random.Random] = {}
_registered: set[int] = set()
OUT_CAP = 4096


class _Fault(Exception):
    """A run-time fault in C (the job's `fault` says which): the packet is dropped and counted."""

    def __init__(self, K: Any) -> None:
        self.K = K


class NativeJob:
    """A packet between ingress and egress: its C job (headers, metadata, standard metadata) and payload."""

    __slots__ = ("egress_port", "priority", "packet_length", "K", "payload", "truncate", "depth", "recirc")

    def __init__(self, egress_port: int, K: Any, payload: bytes | memoryview, priority: int, packet_length: int,
                 truncate: int | None) -> None:
        self.egress_port = egress_port
        self.K = K
        self.priority = priority
        self.packet_length = packet_length
        self.payload = payload
        self.truncate = truncate
        self.depth = 0
        self.recirc = None

    def __repr__(self) -> str:
        return f"NativeJob(port={self.egress_port}, prio={self.priority}, len={self.packet_length})"


_pipes: weakref.WeakValueDictionary[int, NativePipeline] = weakref.WeakValueDictionary()


def _rand32(h: int) -> int:
    return _rngs[h].getrandbits(32)


def _digest(h: int, d: int, vals, n: int) -> None:
    _pipes[h]._on_c_digest(d, tuple(vals[i] for i in range(n)))


def _log(h: int, m: int, vals, n: int) -> None:
    p = _pipes[h]
    p.on_log(rt.format_log(p.cprog.log_msgs[m], tuple(vals[i] for i in range(n))))


def _vs_match(h: int, s: int, vals, n: int) -> int:
    p = _pipes[h]
    return 1 if p.state.value_sets[p.cprog.value_sets[s]].matches(tuple(vals[i] for i in range(n))) else 0


def _meter(h: int, m: int, i: int, nbytes: int, now: int) -> int:
    p = _pipes[h]
    return p.state.meters[p.cprog.meters[m]].execute(i, nbytes, now)


def _entry_hit(h: int, t: int, seq: int, nbytes: int) -> None:
    """A hit in C on a table with a direct counter or idle timeout: the runtime entry counts it (as
    Table.lookup does), so P4Runtime reads and writes stay on the one entry."""
    table = _pipes[h]._tables[t][0]
    e = _pipes[h]._by_seq[table.name].get(seq)
    if e is not None:
        e.packet_count += 1
        e.byte_count += nbytes
        if table.idle_timeout:
            e.last_hit_ns = time.monotonic_ns()


def _dmeter(h: int, t: int, seq: int, nbytes: int, now: int) -> int:
    """A hit in C on a table with a direct meter: the runtime's DirectMeter runs on the hit entry's cell (as
    the Python pipeline's table function does), so P4Runtime meter configs stay on the one entry."""
    table = _pipes[h]._tables[t][0]
    return table.direct_meter.execute(_pipes[h]._by_seq[table.name].get(seq), nbytes, now)


def _cprog(program: Any) -> cgen.CProgram:
    """The C of a compiled program, generated once and shared by its instances (a vfabric fabric loads one
    program per switch; generating takes 0.1-0.3 s, the build itself is cached by digest)."""
    cp = program.__dict__.get("_native_cprog")
    if cp is None:
        cp = cgen.generate(program)
        program.__dict__["_native_cprog"] = cp
    return cp


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
        self.max_logs = 10000
        self.cprog = cprog if cprog is not None else _cprog(program)
        mod = build(self.cprog.source, self.cprog.cdef)
        self.ffi, self.lib = mod.ffi, mod.lib
        if id(mod) not in _registered:
            self.ffi.def_extern(name="p4n_rand32")(_rand32)
            self.ffi.def_extern(name="p4n_digest")(_digest)
            self.ffi.def_extern(name="p4n_log")(_log)
            self.ffi.def_extern(name="p4n_vs_match")(_vs_match)
            self.ffi.def_extern(name="p4n_meter")(_meter)
            self.ffi.def_extern(name="p4n_entry_hit")(_entry_hit)
            self.ffi.def_extern(name="p4n_dmeter")(_dmeter)
            _registered.add(id(mod))
        ffi = self.ffi
        self.I = ffi.new("inst_t *")
        self._rng_key = id(self)
        _rngs[self._rng_key] = random.Random(seed)
        _pipes[self._rng_key] = self
        self.I.rng_handle = self._rng_key
        self._keep: list[Any] = []
        self._tables: list[tuple[Any, Any, cgen.TableRec, Any]] = []
        self._by_seq: dict[str, dict[int, Any]] = {}     # table -> its runtime entries by sequence number
        for x, trec in self.cprog.tables:
            t = state.tables[x.name]
            self._check_table(t, trec)
            ct = ffi.gc(self.lib.p4n_table_new(_key_words(t), 1 if t.needs_priority else 0),
                        self.lib.p4n_table_free)
            self.I.tbl[x.index] = ct
            self._tables.append((t, ct, trec, [-1, -1]))
        self._bind_stateful()      # last: nothing after it may decline
        self._seen = -1
        self._out = ffi.new("uint8_t[]", OUT_CAP)
        self._new = ffi.new
        self._batch_cap = 0
        self._hcap = self.cprog.hcap             # bytes the deparser may write before a frame's payload
        self._uses_payload = self.cprog.uses_payload   # egress/compute read the payload (`*_with_payload`)
        self._bout: Any = None                  # a batch's output frames, back to back
        self._bout_size = 0
        self._tm: Any = ffi.new("uint32_t[]", 64)   # the switch loop's batch: egress port | priority per frame
        self._slots: Any = ffi.new("int32_t[]", 64)  # ... and the park slot of a copy that waits (-1: none)
        # copies waiting in the traffic manager, kept in C (their queue entry is the slot); freed with the pipeline
        self._park = ffi.gc(self.lib.p4n_park_new(), self.lib.p4n_park_free)
        self._lone = -1  # the port of the last `batch_one`'s frame; -1: the last batch was `batch_load`'s
        self._pout_size = 0
        self._pout: Any = None
        self._pout_room(OUT_CAP)
        self._used: Any = ffi.new("uint32_t[]", 1)
        self._bstats = ffi.new("uint32_t[]", 4)
        self._buffer = ffi.buffer
        self._pre = state.pre
        self._sync()

    def __del__(self) -> None:
        _rngs.pop(getattr(self, "_rng_key", None), None)  # type: ignore[arg-type]

    # ------------------------------------------------------------------ state binding
    def _bind_stateful(self) -> None:
        ffi, inst = self.ffi, self.I
        for x in self.cprog.registers:
            r = self.state.registers[x.name]
            if r.bitwidth > 64:
                raise cgen.Unsupported(f"register {x.name} wider than 64 bits")
            arr = ffi.new("u64[]", max(1, r.size))
            for i, v in enumerate(r.values):
                arr[i] = v
            r.values = arr
            self._keep.append(arr)
            inst.reg[x.index] = arr
            inst.reg_size[x.index] = r.size
            inst.reg_mask[x.index] = (1 << r.bitwidth) - 1
        for x in self.cprog.counters:
            c = self.state.counters[x.name]
            p = ffi.new("u64[]", max(1, c.size))
            b = ffi.new("u64[]", max(1, c.size))
            for i in range(c.size):
                p[i] = c.packets[i]
                b[i] = c.bytes[i]
            c.packets, c.bytes = p, b
            self._keep += [p, b]
            inst.cnt_p[x.index] = p
            inst.cnt_b[x.index] = b
            inst.cnt_size[x.index] = c.size

    @staticmethod
    def _check_table(t: Any, trec: cgen.TableRec) -> None:
        spec = getattr(t.profile, "hash_spec", None)
        if spec is not None and spec.crc_config is not None:     # C has the custom CRCs' defaults only
            raise cgen.Unsupported(f"table {t.name}: selector hash {spec.algo} with its own parameters")
        if any(f.bitwidth > 128 or (f.bitwidth > 64 and f.kind is MatchKind.RANGE) for f in t.fields):
            raise cgen.Unsupported(f"table {t.name}: key wider than 128 bits, or a range wider than 64 bits")

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
        nk = _key_words(t)
        entries = t.entries()
        lpm = [i for i, f in enumerate(t.fields) if f.kind is MatchKind.LPM]

        def plen(e: Any) -> int:
            m = e.match[lpm[0]] if lpm else None
            return m.prefix_len if isinstance(m, Lpm) else 0
        entries.sort(key=lambda e: (-plen(e), e._seq))
        self._by_seq[t.name] = {e._seq: e for e in entries}
        groups: dict[int, int] = {}
        val = ffi.new("u64[]", nk)
        mask = ffi.new("u64[]", nk)
        args = ffi.new("u64[]", _MAXA)
        prof = t.profile
        for e in entries:
            ranges = []
            i = 0       # key word (a field wider than 64 bits takes two, high first: wide.split)
            for f, m in zip(t.fields, e.match, strict=True):
                full = (1 << f.bitwidth) - 1
                if m is None:
                    v, mk = 0, 0
                elif isinstance(m, Range):
                    v, mk = 0, 0
                    ranges.append((i, m.low, m.high))
                elif isinstance(m, Exact | Optional_):
                    v, mk = m.value, full
                elif isinstance(m, Lpm):
                    pm = ((1 << m.prefix_len) - 1) << (f.bitwidth - m.prefix_len)
                    v, mk = m.value & pm, pm
                elif isinstance(m, Ternary):
                    v, mk = m.value & m.mask, m.mask
                else:
                    raise cgen.Unsupported(f"table {t.name}: match {m!r}")
                for vw, mw in zip(wide.split(v, f.bitwidth), wide.split(mk, f.bitwidth), strict=True):
                    val[i], mask[i] = vw, mw
                    i += 1
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
                n = self._args(args, call.args if call is not None else (), call.action if call is not None else "")
            lib.p4n_table_add(ct, val, mask, e.priority, e._seq, act, group, args, n)
            for i, lo, hi in ranges:
                lib.p4n_table_range(ct, i, lo, hi)
        lib.p4n_table_finish(ct)
        d = t.default_action
        n = self._args(args, d.args if d is not None else (), d.action if d is not None else "")
        lib.p4n_table_set_default(ct, ids[d.action] if d is not None else -1, args, n)
        if groups:
            assert prof is not None
            off: list[int] = []
            ln: list[int] = []
            acts: list[int] = []
            margs: list[int] = []
            for gid in groups:
                g = prof.groups.get(gid)
                exp = g.expanded if g is not None else ()
                off.append(len(acts))
                ln.append(len(exp))
                for mid in exp:
                    c = prof.members[mid]
                    acts.append(ids[c.action])
                    words = self._arg_words(c.args, c.action)
                    margs.extend(words + [0] * (_MAXA - len(words)))
            lib.p4n_table_set_selectors(ct, len(groups), ffi.new("int32_t[]", off), ffi.new("int32_t[]", ln),
                                        len(acts), ffi.new("int32_t[]", acts or [0]),
                                        ffi.new("u64[]", margs or [0] * _MAXA))

    def _args(self, buf: Any, vals: tuple[int, ...], action: str) -> int:
        words = self._arg_words(vals, action)
        for i, v in enumerate(words):
            buf[i] = v
        return len(words)

    def _arg_words(self, vals: tuple[int, ...], action: str) -> list[int]:
        """An action's data as the C index's u64 words: a value wider than 64 bits in two, high first, as the
        generated dispatch reads them (cgen.CGen.action_data)."""
        widths = self.cprog.arg_widths.get(action, ())
        words: list[int] = []
        for i, v in enumerate(vals):
            w = widths[i] if i < len(widths) else 64
            if v >> max(w, 64) or v < -(1 << 63):
                raise cgen.Unsupported("action argument wider than its parameter")
            words += wide.split(v & ((1 << max(w, 64)) - 1), w)
        if len(words) > _MAXA:
            raise cgen.Unsupported("more than 16 words of action data")
        return words

    # ------------------------------------------------------------------ hooks (as V1Pipeline)
    def _on_c_digest(self, d: int, vals: tuple) -> None:
        """As the Python pipeline's `_digest`: with a sink attached (the P4Runtime server) the sink gets it;
        otherwise it waits in the state."""
        name = self.cprog.digests[d]
        if self.digest_sink is None:
            dg = self.state.digests.get(name)
            if dg is not None:
                dg.emit(vals)
        self.on_digest(name, vals)

    def on_digest(self, name: str, vals: tuple) -> None:
        self.digest_log.append((name, vals))
        if len(self.digest_log) > self.max_logs:
            del self.digest_log[: len(self.digest_log) // 2]
        if self.digest_sink is not None:
            self.digest_sink(name, vals)

    def on_log(self, text: str) -> None:
        logging.getLogger("p4exec.pipeline").info("log_msg: %s", text)
        self.logs.append(text)
        if len(self.logs) > self.max_logs:
            del self.logs[: len(self.logs) // 2]

    def set_digest_sink(self, fn: Any) -> None:
        self.digest_sink = fn

    def _fault(self, K: Any, where: str) -> None:
        if K.fault == 1:
            self.stats["assert_failed"] += 1
            log.warning("assert/assume failed: packet dropped")
        else:
            reason = "header_stack_index" if K.fault == 3 else "division_by_zero"
            self.stats["runtime_fault"] += 1
            self.stats[f"runtime_fault:{reason}"] += 1
            log.warning("p4exec: run-time fault %s in %s; packet dropped", reason, where)

    # ------------------------------------------------------------------ ingress half
    def ingress(self, port: int, data: bytes, now_us: int) -> list[NativeJob]:
        if changes.WRITES.n != self._seen:
            self._sync()
        self.last_malformed = False
        if type(data) is not bytes:
            data = bytes(data)
        K = self._new("job_t *")
        r = self.lib.p4n_ingress(self.I, K, data, len(data), port, now_us)
        if r < 0:
            # a frame the parser rejected stays malformed when ingress then faults (an assert on a header the
            # parser could not extract): the switch counts its drop so, as the Python pipeline does
            self.last_malformed = K.parser_err > 0
            self._fault(K, "ingress")
            return []
        if r & 0x1000:
            self.last_malformed = True
        # a view, not a copy: egress joins it to the deparsed headers, the one copy of the payload a frame needs
        payload = memoryview(data)[r >> 16:]
        if r & 0xA000:         # multicast, I2E clone or resubmit: the traffic manager's part, in Python
            jobs: list[NativeJob] = []
            try:
                self._after_ingress(K, port, data, now_us, payload, jobs, 0)
            except _Fault as f:
                self._fault(f.K, "ingress")
                return []
            return jobs
        spec = r & 0x1FF
        if spec == DROP_PORT:
            self.stats["dropped"] += 1
            return []
        return [NativeJob(spec, K, payload, (r >> 9) & 7, len(data), K.truncate if r & 0x4000 else None)]

    def _after_ingress(self, K: Any, port: int, data: bytes, now: int, payload: bytes | memoryview, jobs: list[NativeJob],
                       depth: int) -> None:
        """V1Pipeline._ingress_pass after the ingress control: I2E clones, resubmit, multicast, unicast, drop."""
        if K.clone_type == 1:
            self._i2e_clone(K, port, data, now, jobs, depth)
        if K.resubmit:
            if depth >= LOOP_CAP:
                self.stats["resubmit_loop_dropped"] += 1
                return
            K2 = self._new("job_t *")
            K2.sm.instance_type = RESUBMIT
            if K.resubmit_fl >= 0:
                self.lib.p4n_field_list(K.resubmit_fl, K, K2)
            r = self.lib.p4n_ingress(self.I, K2, data, len(data), port, now)
            if r < 0:
                raise _Fault(K2)
            if r & 0x1000:
                self.last_malformed = True
            self._after_ingress(K2, port, data, now, data[r >> 16:], jobs, depth + 1)
            return
        if K.sm.mcast_grp:
            for j in self._replicate(K, payload):
                j.depth = depth
                jobs.append(j)
            return
        spec = K.sm.egress_spec
        if spec == DROP_PORT:
            self.stats["dropped"] += 1
            return
        j = NativeJob(spec, K, payload, K.sm.priority, K.sm.packet_length, None if K.truncate < 0 else K.truncate)
        j.depth = depth
        jobs.append(j)

    def _session(self, session: int) -> tuple[list, Any, int | None]:
        reps = self._pre.clone_replicas(session)
        sess = self._pre.sessions.get(session)
        trunc = sess.packet_length_bytes if sess is not None and sess.packet_length_bytes else None
        return reps, sess, trunc

    def _i2e_clone(self, K: Any, port: int, data: bytes, now: int, jobs: list[NativeJob], depth: int) -> None:
        reps, sess, trunc = self._session(K.clone_session)
        for eport, rid in reps:
            K2 = self._new("job_t *")
            if self.lib.p4n_parse(self.I, K2, data, len(data), port, now) < 0:
                raise _Fault(K2)
            if K.clone_fl >= 0:
                self.lib.p4n_field_list(K.clone_fl, K, K2)
            K2.sm.instance_type = INGRESS_CLONE
            K2.sm.egress_rid = rid
            if sess is not None:
                K2.sm.priority = sess.class_of_service
            j = NativeJob(eport, K2, data[K2.payload_off:], K2.sm.priority, K2.sm.packet_length, trunc)
            j.depth = depth
            jobs.append(j)

    def _replicate(self, K: Any, payload: bytes | memoryview) -> list[NativeJob]:
        reps = self._pre.replicas(K.sm.mcast_grp)
        if not reps:
            self.stats["dropped"] += 1
        jobs = []
        last = len(reps) - 1
        size = self.ffi.sizeof("job_t")
        for i, (eport, rid) in enumerate(reps):
            if i == last:
                k = K
            else:
                k = self._new("job_t *")
                self.ffi.memmove(k, K, size)
            k.sm.egress_rid = rid
            k.sm.instance_type = REPLICATION
            jobs.append(NativeJob(eport, k, payload, k.sm.priority, k.sm.packet_length,
                                  None if k.truncate < 0 else k.truncate))
        return jobs

    # ------------------------------------------------------------------ egress half
    def egress(self, job: NativeJob, now_us: int, queue_info: Any = None) -> list[tuple[int, bytes]]:
        if changes.WRITES.n != self._seen:
            self._sync()
        out: list[tuple[int, bytes]] = []
        try:
            self._egress_pass(job, now_us, queue_info, out)
        except _Fault as f:
            self._fault(f.K, "egress")
        return out

    def _egress_pass(self, job: NativeJob, now_us: int, qi: Any, out: list[tuple[int, bytes]]) -> None:
        K = job.K
        if job.truncate is not None:
            K.truncate = job.truncate
        if self._uses_payload:
            keep = self._point_payload(K, job.payload)   # noqa: F841 - alive over the C call
        if qi is None:
            n = self.lib.p4n_egress(self.I, K, self._out, OUT_CAP, job.egress_port, now_us, 0, 0, 0, 0, 0)
        else:
            n = self.lib.p4n_egress(self.I, K, self._out, OUT_CAP, job.egress_port, now_us, 1, qi.enq_timestamp,
                                    qi.enq_qdepth, qi.deq_timedelta, qi.deq_qdepth)
        if n == -1:
            self.stats["dropped"] += 1
            return
        if n == -3:
            self._egress_tail(job, now_us, out)
            return
        if n < 0:
            raise _Fault(K)
        pkt = self._buffer(self._out, n)[:] + job.payload
        trunc = K.truncate
        if 0 <= trunc < len(pkt):
            pkt = pkt[:trunc]
        out.append((job.egress_port, pkt))

    def _point_payload(self, K: Any, payload: bytes | memoryview) -> Any:
        """Point the job at its payload for a `*_with_payload` hash in egress/compute (C set it at parse time,
        into a frame buffer that may be gone now); the caller keeps the returned buffer alive over the call."""
        buf = self.ffi.from_buffer("uint8_t[]", payload)
        K.pay = buf
        K.pay_len = len(payload)
        return buf

    def _egress_tail(self, job: NativeJob, now: int, out: list[tuple[int, bytes]]) -> None:
        """V1Pipeline._egress_pass after the egress control, when it asked for an E2E clone or recirculation."""
        K = job.K
        if K.clone_type == 2:
            self._e2e_clone(K, job, now, out)
        if K.sm.egress_spec == DROP_PORT:
            self.stats["dropped"] += 1
            return
        if self._uses_payload:
            keep = self._point_payload(K, job.payload)   # noqa: F841 - alive over the C call
        n = self.lib.p4n_finish(self.I, K, self._out, OUT_CAP)
        if n < 0:
            raise _Fault(K)
        pkt = self._buffer(self._out, n)[:] + job.payload
        trunc = K.truncate
        if 0 <= trunc < len(pkt):
            pkt = pkt[:trunc]
        if K.recirc:
            if job.depth >= LOOP_CAP:
                self.stats["recirculate_loop_dropped"] += 1
                return
            K2 = self._new("job_t *")
            K2.sm.instance_type = RECIRC
            if K.recirc_fl >= 0:
                self.lib.p4n_field_list(K.recirc_fl, K, K2)
            port = K.sm.ingress_port
            r = self.lib.p4n_ingress(self.I, K2, pkt, len(pkt), port, now)
            if r < 0:
                raise _Fault(K2)
            jobs: list[NativeJob] = []
            self._after_ingress(K2, port, pkt, now, pkt[r >> 16:], jobs, job.depth + 1)
            for j in jobs:
                self._egress_pass(j, now, None, out)
            return
        out.append((job.egress_port, pkt))

    def _e2e_clone(self, K: Any, job: NativeJob, now: int, out: list[tuple[int, bytes]]) -> None:
        reps, sess, trunc = self._session(K.clone_session)
        if not reps or job.depth >= LOOP_CAP:
            return
        ffi = self.ffi
        for eport, rid in reps:
            K2 = self._new("job_t *")
            K2.hdr = K.hdr
            if K.clone_fl >= 0:
                self.lib.p4n_field_list(K.clone_fl, K, K2)
            K2.sm.instance_type = EGRESS_CLONE
            K2.sm.egress_rid = rid
            K2.sm.ingress_port = K.sm.ingress_port
            K2.sm.packet_length = K.sm.packet_length
            if sess is not None:
                K2.sm.priority = sess.class_of_service
            K2.truncate = -1
            j = NativeJob(eport, K2, job.payload, K2.sm.priority, K2.sm.packet_length, trunc)
            j.depth = job.depth + 1
            self._egress_pass(j, now, None, out)
        _ = ffi

    def process_batch(self, ports: list[int], datas: list[bytes], nows: list[int]) -> list[tuple[int, int, bytes]]:
        """`process` of frames i = 0.. (datas[i] arriving on ports[i] at nows[i]) in order, with empty queues, in
        one call into C per batch: the frames that leave, as (i, port, bytes), in order. Multicast frames finish
        in Python (replication), as in `ingress`."""
        if changes.WRITES.n != self._seen:
            self._sync()
        nf = len(datas)
        if nf == 0:
            return []
        ffi, lib = self.ffi, self.lib
        lens = list(map(len, datas))
        self._room(nf, sum(lens))
        stats = self._bstats
        stats[0] = 0
        used = lib.p4n_batch(self.I, self._jobs, nf, b"".join(datas), lens, ports, nows,
                             self._bout, self._bout_size, self._res, stats)
        buf = self._buffer(self._bout, used)[:]
        out: list[tuple[int, int, bytes]] = []
        append = out.append
        o = 0
        drops = 0
        for i, r in enumerate(ffi.unpack(self._res, nf)):
            if r >= 0:
                ln = r & 0xFFFFFFFF
                append((i, r >> 32, buf[o:o + ln]))
                o += ln
            elif r == -1:
                drops += 1
            else:
                out.extend((i, port, data) for port, data in self._batch_slow(i, r, datas[i], nows[i]))
        if drops:
            self.stats["dropped"] += drops
        self.last_malformed = bool(stats[0])
        return out

    def _room(self, nf: int, data_bytes: int) -> None:
        """Job and result arrays for `nf` frames, and output room for all of them (each frame's headers may
        grow to `hcap` before its payload): a batch that ran out of room would finish its remaining frames
        one by one in Python (4-KiB RoCE frames overflowed a fixed 2 KiB per frame at half the batch)."""
        ffi = self.ffi
        if nf > self._batch_cap:
            self._batch_cap = nf
            self._jobs = ffi.new("job_t[]", nf)
            self._res = ffi.new("int64_t[]", nf)
        need = data_bytes + nf * self._hcap
        if need > self._bout_size:
            self._bout_size = max(need, 2 * self._bout_size)
            self._bout = ffi.new("uint8_t[]", self._bout_size)
            self._bout_view = ffi.buffer(self._bout)  # slices of it are bytes: a frame out in one step

    # ------------------------------------------------------------------ the switch loop's batch
    def batch_load(self, ports: list[int], datas: list[bytes]) -> None:
        """The frames of one `SwitchLoop.ingress_batch` (p4exec/switch/batch.py), copied into C once."""
        if changes.WRITES.n != self._seen:
            self._sync()
        nf = len(datas)
        lens = list(map(len, datas))
        offs = [0] * nf
        o = 0
        for i, n in enumerate(lens):
            offs[i] = o
            o += n
        self._room(nf, o)
        if len(self._tm) < nf:
            self._tm = self.ffi.new("uint32_t[]", max(nf, 64))
            self._slots = self.ffi.new("int32_t[]", max(nf, 64))
        self._bdata = b"".join(datas)
        self._blens, self._boffs, self._bports = lens, offs, ports
        self._lone = -1
        self._used[0] = 0

    def batch_run(self, start: int, now_us: int, gate: Any, now_ns: int, free_at: Any
                  ) -> tuple[int, int, list[tuple[int, int, int]]]:
        """Frames `start`.. of the loaded batch through C up to the first that Python must finish (see
        p4n_switch_batch; `gate` and `free_at`: the ports' gates and paced ports' next departures, at `now_ns`):
        (its index or the batch size, the C result code for it, [(result, tm word, output offset)] of frames
        start..index-1)."""
        used0 = self._used[0]
        nf = len(self._blens)
        stop = self.lib.p4n_switch_batch(self.I, self._jobs, start, nf, self._bdata, self._boffs, self._blens,
                                         self._bports, now_us, gate, self._bout, self._bout_size, self._used, self._res,
                                         self._tm, now_ns, free_at, self._park, self._slots)
        ffi = self.ffi
        k = stop - start
        codes = ffi.unpack(self._res + start, k) if k else []
        words = ffi.unpack(self._tm + start, k) if k else []
        # this run's output bytes copied out of C once; batch_bytes slices them (one cffi call per run, not per frame)
        self._chunk_base = used0
        self._chunk = self._buffer(self._bout + used0, self._used[0] - used0)[:]
        out = []
        o = used0
        for r, w in zip(codes, words, strict=True):
            out.append((r, w, o))
            if r >= 0:
                o += r
        return stop, (self._res[stop] if stop < nf else 0), out

    def batch_one(self, port: int, data: bytes, now_us: int, gate: Any, now_ns: int, free_at: Any
                  ) -> tuple[int, int]:
        """A batch of one frame (`SwitchLoop.ingress` of a frame that arrived alone) in one call into C, without
        `batch_load`'s lists: (its result code as `batch_run`'s, its tm word). `one_bytes` gives a forwarded
        frame's bytes; `batch_jobs`/`batch_fault`/`batch_tail` with i = 0 work as after `batch_run`."""
        if changes.WRITES.n != self._seen:
            self._sync()
        if type(data) is not bytes:
            data = bytes(data)
        n = len(data)
        if self._batch_cap < 1 or n + self._hcap > self._bout_size:
            self._room(1, n)
        self._bdata = data
        self._lone = port  # (no per-frame lists for one frame: `_frame` knows)
        r = self.lib.p4n_switch_one(self.I, self._jobs, data, n, port, now_us, gate, self._bout, self._bout_size,
                                    self._tm, now_ns, free_at, self._park, self._slots)
        return r, self._tm[0]

    # ------------------------------------------------------------------ copies parked in C while they wait
    def parked_slot(self, i: int) -> int:
        """Frame i of the last batch (result -9): the park slot C kept its copy in, or -1 (none: `batch_jobs`)."""
        return self._slots[i]

    def _pout_room(self, n: int) -> None:
        if n > self._pout_size:
            self._pout_size = max(n, 2 * self._pout_size)
            self._pout = self.ffi.new("uint8_t[]", self._pout_size)
            self._pout_view = self.ffi.buffer(self._pout)

    def egress_parked(self, slot: int, now_us: int, qi: Any) -> list[tuple[int, bytes]]:
        """`egress` of the copy parked in `slot` (the switch loop queued the slot in its place), leaving its queue
        with metadata `qi`: one call into C for egress, the deparser and the payload. The slot is free after."""
        if changes.WRITES.n != self._seen:
            self._sync()
        r = self.lib.p4n_park_serve(self.I, self._park, slot, now_us, qi.enq_timestamp, qi.enq_qdepth,
                                    qi.deq_timedelta, qi.deq_qdepth, self._pout, self._pout_size)
        if r >= 0:
            return [(r >> 32, self._pout_view[:r & 0xFFFFFFFF])]
        if r == -4:     # a payload longer than the output buffer holds (nothing ran): room, then again
            self._pout_room(self._hcap + len(self._parked_payload(slot)))
            return self.egress_parked(slot, now_us, qi)
        if r == -1:
            self.stats["dropped"] += 1
            return []
        # egress ran and faulted (-2) or asked for an E2E clone / recirculation (-3): Python finishes, as `egress`
        K = self._new("job_t *")
        self.ffi.memmove(K, self.lib.p4n_park_job(self._park, slot), self.ffi.sizeof("job_t"))
        payload = self._parked_payload(slot)
        port = self.lib.p4n_park_port(self._park, slot)
        self.lib.p4n_park_drop(self._park, slot)
        out: list[tuple[int, bytes]] = []
        if r == -2:
            self._fault(K, "egress")
            return out
        job = NativeJob(port, K, payload, K.sm.priority & 7, K.sm.packet_length, None)
        try:
            self._egress_tail(job, now_us, out)
        except _Fault as f:
            self._fault(f.K, "egress")
        return out

    def _parked_payload(self, slot: int) -> bytes:
        n = self.ffi.new("uint32_t *")
        ptr = self.lib.p4n_park_payload(self._park, slot, n)
        return self._buffer(ptr, n[0])[:]

    def parked(self) -> int:
        """How many copies wait parked in C (each is in some traffic manager queue)."""
        return self.lib.p4n_park_used(self._park)

    def release_parked(self, slot: int) -> None:
        """The copy in `slot` will never leave (its queue was flushed, or the traffic manager refused it)."""
        self.lib.p4n_park_drop(self._park, slot)

    def one_bytes(self, n: int) -> bytes:
        """The output frame of the last `batch_one` (n bytes, its result)."""
        return self._bout_view[:n]

    def batch_bytes(self, off: int, n: int) -> bytes:
        """Output bytes of a frame of the last `batch_run` (`off` as it returned)."""
        o = off - self._chunk_base
        return self._chunk[o:o + n]

    def batch_fault(self, i: int, where: str) -> bool:
        """Count frame i's fault; True when its parser had rejected it (the drop counts as malformed)."""
        self._fault(self._jobs + i, where)
        return bool(self._jobs[i].parser_err > 0)

    def batch_jobs(self, i: int, r: int, now_us: int) -> list[NativeJob]:
        """Frame i after ingress only (r -3, -4, -9, -10): the jobs `ingress` would have returned."""
        K = self._new("job_t *")
        self.ffi.memmove(K, self._jobs + i, self.ffi.sizeof("job_t"))
        data, port = self._frame(i)
        n = len(data)
        payload = data[K.payload_off:]
        self.last_malformed = K.parser_err > 0
        if r != -3:
            return [NativeJob(K.sm.egress_spec & 0x1FF, K, payload, K.sm.priority & 7, n,
                              K.truncate if K.truncate >= 0 else None)]
        jobs: list[NativeJob] = []
        try:
            self._after_ingress(K, port, data, now_us, payload, jobs, 0)
        except _Fault as f:
            self.last_malformed = False
            self._fault(f.K, "ingress")
            return []
        return jobs

    def batch_tail(self, i: int, now_us: int) -> list[tuple[int, bytes]]:
        """Frame i stopped after egress (r -6: E2E clone or recirculation): what `egress` gives for it."""
        return self._batch_slow(i, -6, self._frame(i)[0], now_us)

    def _frame(self, i: int) -> tuple[bytes, int]:
        """Frame i of the last batch (`batch_load` or `batch_one`) and the port it came in on."""
        if self._lone >= 0:
            return self._bdata, self._lone
        o = self._boffs[i]
        return self._bdata[o:o + self._blens[i]], self._bports[i]

    def _batch_slow(self, i: int, r: int, data: bytes, now: int) -> list[tuple[int, bytes]]:
        K = self._new("job_t *")
        self.ffi.memmove(K, self._jobs + i, self.ffi.sizeof("job_t"))
        if r in (-2, -5):
            self._fault(K, "ingress" if r == -2 else "egress")
            return []
        payload = data[K.payload_off:]
        res: list[tuple[int, bytes]] = []
        if r == -6:     # egress ran and asked for an E2E clone or recirculation
            job = NativeJob(K.sm.egress_port, K, payload, K.sm.priority, K.sm.packet_length,
                            None if K.truncate < 0 else K.truncate)
            try:
                self._egress_tail(job, now, res)
            except _Fault as f:
                self._fault(f.K, "egress")
            return res
        jobs: list[NativeJob] = []
        if r == -3:     # multicast, I2E clone, resubmit or recirculation asked in ingress
            try:
                self._after_ingress(K, K.sm.ingress_port, data, now, payload, jobs, 0)
            except _Fault as f:
                self._fault(f.K, "ingress")
                return []
        else:   # no room in the batch buffer: egress alone
            jobs = [NativeJob(K.sm.egress_spec, K, payload, K.sm.priority, K.sm.packet_length,
                              None if K.truncate < 0 else K.truncate)]
        for j in jobs:
            res.extend(self.egress(j, now))
        return res

    def process(self, port: int, data: bytes, now_us: int, queue_info: Any = None) -> list[tuple[int, bytes]]:
        out: list[tuple[int, bytes]] = []
        for job in self.ingress(port, data, now_us):
            out.extend(self.egress(job, now_us, queue_info(job.egress_port) if callable(queue_info) else None))
        return out
