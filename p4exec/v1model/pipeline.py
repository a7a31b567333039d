"""The v1model pipeline as BMv2's simple_switch runs it, split at the traffic manager.

``ingress(port, data, now_us) -> list[EgressJob]``: parser -> verifyChecksum -> ingress, then (in
simple_switch's order) I2E clones, resubmit, multicast replication or unicast/drop.
``egress(job, now_us, queue_info) -> list[(port, bytes)]``: egress, E2E clones, drop check,
computeChecksum + deparser, truncation, recirculation back into ingress.
"""
from __future__ import annotations

import logging
from collections import Counter

from p4exec.compiler.faults import P4Fault
from p4exec.v1model import rt
from p4exec.v1model.namespace import build_namespace

log = logging.getLogger("p4exec.pipeline")

DROP_PORT = 511
NORMAL, INGRESS_CLONE, EGRESS_CLONE, COALESCED, RECIRC, REPLICATION, RESUBMIT = 0, 1, 2, 3, 4, 5, 6
LOOP_CAP = 16   # resubmit/recirculate passes per packet before p4exec drops it


class EgressJob:
    """A packet between ingress and egress (what the traffic manager queues)."""

    __slots__ = ("egress_port", "priority", "packet_length", "hdr", "meta", "sm", "payload", "truncate", "depth",
                 "recirc")

    def __init__(self, egress_port, hdr, meta, sm, payload, truncate=None, depth=0, recirc=None):
        self.egress_port = egress_port
        self.priority = sm.priority
        self.hdr = hdr
        self.meta = meta
        self.sm = sm
        self.payload = payload
        self.truncate = truncate
        self.depth = depth
        self.recirc = recirc          # recirculate requested in ingress (BMv2 keeps it in metadata)
        self.packet_length = sm.packet_length

    def __repr__(self):
        return f"EgressJob(port={self.egress_port}, prio={self.priority}, len={self.packet_length})"


class V1Pipeline:
    def __init__(self, program, state, seed: int = 0):
        self.program = program
        self.state = state
        self.seed = seed
        self.pk = rt.PacketCtx()
        self.stats: Counter = Counter()
        self.logs: list[str] = []
        self.digest_log: list[tuple[str, tuple]] = []
        self.digest_sink = None
        self.last_malformed = False  # the last ingress() met a parser error or failed on its frame
        self.max_logs = 10000
        ns = build_namespace(program, state, self)
        self.ns = ns
        self._parse = ns["PARSER"]
        self._verify = ns["VERIFY"]
        self._ingress = ns["INGRESS"]
        self._egress = ns["EGRESS"]
        self._compute = ns["COMPUTE"]
        self._deparse = ns["DEPARSER"]
        self._H = ns["NEW_H"]
        self._M = ns["NEW_M"]
        self._SM = ns["NEW_SM"]
        self._pre = state.pre

    # ------------------------------------------------------------------ hooks
    def on_digest(self, name, vals):
        self.digest_log.append((name, vals))
        if len(self.digest_log) > self.max_logs:
            del self.digest_log[: len(self.digest_log) // 2]
        if self.digest_sink is not None:
            self.digest_sink(name, vals)

    def on_log(self, text):
        log.info("log_msg: %s", text)
        self.logs.append(text)
        if len(self.logs) > self.max_logs:
            del self.logs[: len(self.logs) // 2]

    def set_digest_sink(self, fn):
        self.digest_sink = fn

    def _count_fault(self, f: P4Fault, where: str) -> None:
        """A run-time fault (BMv2 would abort the process): drop this packet, count it with its reason."""
        self.stats["runtime_fault"] += 1
        self.stats[f"runtime_fault:{f.reason}"] += 1
        log.warning("p4exec: run-time fault %s in %s; packet dropped", f.reason, where)

    # ------------------------------------------------------------------ ingress half
    def _parse_into(self, data, hdr, meta, sm):
        pk = self.pk
        off, err = self._parse(data, hdr, meta, sm)
        if err > 0:
            sm.parser_error = err
            self.last_malformed = True
        payload = data[off:]
        pk.payload = payload
        pk.sm = sm
        self._verify(hdr, meta)
        return payload

    def ingress(self, port: int, data: bytes, now_us: int) -> list[EgressJob]:
        jobs: list[EgressJob] = []
        self.last_malformed = False
        try:
            self._ingress_pass(port, bytes(data), now_us, NORMAL, None, None, None, jobs, 0)
        except rt.P4AssertError as e:
            self.stats["assert_failed"] += 1
            log.warning("assert/assume failed at %s: packet dropped", e)
            return []
        except P4Fault as f:
            self._count_fault(f, "ingress")
            return []
        except Exception:  # noqa: BLE001 - a bug in a program must not kill the switch
            self.last_malformed = True
            self.stats["runtime_error"] += 1
            log.exception("p4exec: error while processing a packet in ingress; packet dropped")
            return []
        return jobs

    def _ingress_pass(self, port, data, now, itype, fl, old_meta, old_sm, jobs, depth):
        pk = self.pk
        hdr = self._H()
        meta = self._M()
        sm = self._SM()
        sm.ingress_port = port
        sm.instance_type = itype
        sm.packet_length = len(data)
        sm.ingress_global_timestamp = now & 0xFFFFFFFFFFFF
        if fl is not None:
            fl(old_meta, old_sm, meta, sm)
        # pk.reset(sm, now, len(data)) and _parse_into, inlined: this runs once per packet
        pk.sm = sm
        pk.now = now
        pk.pkt_len = len(data)
        pk.clone = pk.resubmit = pk.recirc = pk.digests = pk.truncate = pk.logs = pk.dm_entry = None
        pk.assert_failed = False
        off, err = self._parse(data, hdr, meta, sm)
        if err > 0:
            sm.parser_error = err
            self.last_malformed = True
        pk.payload = payload = data[off:]
        self._verify(hdr, meta)
        try:
            self._ingress(hdr, meta, sm)
        except rt.P4Exit:
            pass
        clone = pk.clone
        resub = pk.resubmit
        trunc = pk.truncate
        # I2E clones: the original packet, parsed again, preserved metadata copied over
        if clone is not None and clone[0] == 0:
            self._i2e_clone(port, data, now, clone, meta, sm, jobs, depth)
        if resub is not None:
            if depth >= LOOP_CAP:
                self.stats["resubmit_loop_dropped"] += 1
                return
            self._ingress_pass(port, data, now, RESUBMIT, resub, meta, sm, jobs, depth + 1)
            return
        grp = sm.mcast_grp
        if grp:
            reps = self._pre.replicas(grp)
            if not reps:
                self.stats["dropped"] += 1
            for i, (eport, rid) in enumerate(reps):
                if i == len(reps) - 1:
                    h, m, s = hdr, meta, sm
                else:
                    h, m, s = hdr._copy(), meta._copy(), sm._copy()
                s.egress_rid = rid
                s.instance_type = REPLICATION
                jobs.append(EgressJob(eport, h, m, s, payload, trunc, depth, pk.recirc))
            return
        spec = sm.egress_spec
        if spec == DROP_PORT:
            self.stats["dropped"] += 1
            return
        jobs.append(EgressJob(spec, hdr, meta, sm, payload, trunc, depth, pk.recirc))

    def _i2e_clone(self, port, data, now, clone, meta, sm, jobs, depth):
        _, session, fl = clone
        reps = self._pre.clone_replicas(session)
        if not reps:
            return
        sess = self._pre.sessions.get(session)
        trunc = sess.packet_length_bytes if sess is not None and sess.packet_length_bytes else None
        saved = self.pk.payload
        saved_sm = self.pk.sm
        for eport, rid in reps:
            h = self._H()
            m = self._M()
            s = self._SM()
            s.ingress_port = port
            s.packet_length = len(data)
            s.ingress_global_timestamp = now & 0xFFFFFFFFFFFF
            payload = self._parse_into(data, h, m, s)
            if fl is not None:
                fl(meta, sm, m, s)
            s.instance_type = INGRESS_CLONE
            s.egress_rid = rid
            if sess is not None:
                s.priority = sess.class_of_service
            jobs.append(EgressJob(eport, h, m, s, payload, trunc, depth))
        self.pk.payload = saved
        self.pk.sm = saved_sm

    # ------------------------------------------------------------------ egress half
    def egress(self, job: EgressJob, now_us: int, queue_info=None) -> list[tuple[int, bytes]]:
        out: list[tuple[int, bytes]] = []
        try:
            self._egress_pass(job, now_us, queue_info, out)
        except rt.P4AssertError as e:
            self.stats["assert_failed"] += 1
            log.warning("assert/assume failed at %s: packet dropped", e)
        except P4Fault as f:
            self._count_fault(f, "egress")
        except Exception:  # noqa: BLE001
            self.stats["runtime_error"] += 1
            log.exception("p4exec: error while processing a packet in egress; packet dropped")
        return out

    def _egress_pass(self, job, now, qi, out):
        pk = self.pk
        hdr, meta, sm = job.hdr, job.meta, job.sm
        sm.egress_port = job.egress_port
        sm.egress_spec = 0          # BMv2 clears egress_spec when egress starts (a drop needs mark_to_drop in egress)
        sm.egress_global_timestamp = now & 0xFFFFFFFFFFFF
        if qi is None:
            sm.enq_timestamp = now & 0xFFFFFFFF
            sm.enq_qdepth = sm.deq_timedelta = sm.deq_qdepth = 0
        else:
            sm.enq_timestamp = qi.enq_timestamp & 0xFFFFFFFF
            sm.enq_qdepth = qi.enq_qdepth & 0x7FFFF
            sm.deq_timedelta = qi.deq_timedelta & 0xFFFFFFFF
            sm.deq_qdepth = qi.deq_qdepth & 0x7FFFF
        # pk.reset(sm, now, sm.packet_length), inlined (once per packet), with the job's side-band state
        pk.sm = sm
        pk.now = now
        pk.pkt_len = sm.packet_length
        pk.payload = job.payload
        pk.truncate = job.truncate
        pk.recirc = job.recirc
        pk.clone = pk.resubmit = pk.digests = pk.logs = pk.dm_entry = None
        pk.assert_failed = False
        try:
            self._egress(hdr, meta, sm)
        except rt.P4Exit:
            pass
        clone = pk.clone
        recirc = pk.recirc
        trunc = pk.truncate
        if clone is not None and clone[0] == 1:
            self._e2e_clone(clone, hdr, meta, sm, job, now, out)
        if sm.egress_spec == DROP_PORT:
            self.stats["dropped"] += 1
            return
        pk.sm = sm
        pk.payload = job.payload
        self._compute(hdr, meta)
        parts: list[bytes] = []
        self._deparse(parts, hdr)
        parts.append(job.payload)
        pkt = b"".join(parts)
        if trunc is not None and trunc < len(pkt):
            pkt = pkt[:trunc]
        if recirc is not None:
            if job.depth >= LOOP_CAP:
                self.stats["recirculate_loop_dropped"] += 1
                return
            jobs: list[EgressJob] = []
            self._ingress_pass(sm.ingress_port, pkt, now, RECIRC, recirc, meta, sm, jobs, job.depth + 1)
            for j in jobs:
                self._egress_pass(j, now, None, out)
            return
        out.append((job.egress_port, pkt))

    def _e2e_clone(self, clone, hdr, meta, sm, job, now, out):
        _, session, fl = clone
        reps = self._pre.clone_replicas(session)
        if not reps or job.depth >= LOOP_CAP:
            return
        sess = self._pre.sessions.get(session)
        trunc = sess.packet_length_bytes if sess is not None and sess.packet_length_bytes else None
        saved_pk = (self.pk.sm, self.pk.payload, self.pk.truncate, self.pk.clone, self.pk.recirc)
        for eport, rid in reps:
            m = self._M()
            s = self._SM()
            if fl is not None:
                fl(meta, sm, m, s)
            s.instance_type = EGRESS_CLONE
            s.egress_rid = rid
            s.ingress_port = sm.ingress_port
            s.packet_length = sm.packet_length
            if sess is not None:
                s.priority = sess.class_of_service
            self._egress_pass(EgressJob(eport, hdr._copy(), m, s, job.payload, trunc, job.depth + 1), now, None,
                              out)
        pk = self.pk
        pk.sm, pk.payload, pk.truncate, pk.clone, pk.recirc = saved_pk

    # ------------------------------------------------------------------ both halves
    def process(self, port: int, data: bytes, now_us: int, queue_info=None) -> list[tuple[int, bytes]]:
        out: list[tuple[int, bytes]] = []
        for job in self.ingress(port, data, now_us):
            out.extend(self.egress(job, now_us, queue_info(job.egress_port) if callable(queue_info) else None))
        return out
