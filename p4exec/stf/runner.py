"""Run a p4c STF test (the format of p4c's BMv2 test driver) against a P4 program on p4exec.

Semantics follow p4c's bmv2stf driver: table and PRE commands act at their place in the file, every
`packet` runs through the whole v1model pipeline at once, and at the end the packets that came out of each
port are compared, in order, with that port's `expect` lines (`*` = any nibble, `$` = the packet ends
there, no `$` = the packet may be longer). Packets nobody expected fail the test, unless the port has an
`expect PORT` line without data (any packets accepted).
"""
from __future__ import annotations

import operator
from collections import defaultdict
from dataclasses import dataclass, field

from p4exec.errors import P4Error
from p4exec.harness import Harness
from p4exec.runtime import CloneSession, RuntimeOpError
from p4exec.stf import parse as S

WAIT_DEFAULT_US = 100_000
PACKET_GAP_US = 1


@dataclass
class StfResult:
    passed: bool
    messages: list[str] = field(default_factory=list)
    outputs: dict[int, list[bytes]] = field(default_factory=dict)

    def report(self) -> str:
        return "\n".join(self.messages)


def _fmt(data: bytes) -> str:
    return data.hex().upper()


def _fmt_expect(e: S.Expect) -> str:
    if e.pattern is None:
        return "(any)"
    return e.pattern + ("$" if e.exact else "")


def _diff_line(pattern: str, got: str) -> str:
    marks = []
    for i in range(max(len(pattern), len(got))):
        p = pattern[i] if i < len(pattern) else " "
        g = got[i] if i < len(got) else " "
        marks.append(" " if p == "*" or p == g or (p == " " and i >= len(pattern)) else "^")
    return "".join(marks).rstrip()


class StfRunner:
    def __init__(self, harness: Harness, stf_name: str = "<stf>"):
        self.h = harness
        self.stf_name = stf_name
        self.expects: dict[int, list[S.Expect]] = defaultdict(list)
        self.outputs: dict[int, list[bytes]] = defaultdict(list)
        self.any_ports: set[int] = set()
        self.messages: list[str] = []
        self.failures: list[str] = []
        self.handles: dict[str, list] = defaultdict(list)
        self.named_handles: dict[str, object] = {}
        self.sent = 0

    # ------------------------------------------------------------------ commands
    def run(self, stmts: list[S.Stmt]) -> StfResult:
        for st in stmts:
            try:
                self.exec(st)
            except P4Error as e:
                self.failures.append(str(e))
            except RuntimeOpError as e:
                self.failures.append(f"{st.loc}: error: {e}")
            except (KeyError, ValueError, TypeError, IndexError) as e:
                self.failures.append(f"{st.loc}: error: {type(e).__name__}: {e}")
        self.check_outputs()
        ok = not self.failures
        msgs = self.messages + self.failures
        msgs.append(f"{'PASS' if ok else 'FAIL'}: {self.sent} packet(s) sent, "
                    f"{sum(len(v) for v in self.outputs.values())} received")
        return StfResult(ok, msgs, dict(self.outputs))

    def exec(self, st: S.Stmt) -> None:
        h = self.h
        state = h.state
        if isinstance(st, S.AddEntry):
            tname = S.resolve_name(state.tables, st.table, "table", st.loc)
            table = state.tables[tname]
            entry = S.table_entry(table, st)
            stored = table.insert(entry)
            stored = stored if stored is not None else entry
            self.handles[tname].append(stored)
            if st.handle:
                self.named_handles[st.handle] = stored
        elif isinstance(st, S.SetDefault):
            tname = S.resolve_name(state.tables, st.table, "table", st.loc)
            table = state.tables[tname]
            table.set_default(S.action_call(table, st.action, st.loc))
        elif isinstance(st, S.RemoveAll):
            for t in state.tables.values():
                for e in list(t.entries()):
                    if not e.is_const:
                        t.delete(e)
        elif isinstance(st, S.Packet):
            self.sent += 1
            for port, data in h.send(st.port, st.data):
                self.outputs[port].append(data)
            h.advance(PACKET_GAP_US)
        elif isinstance(st, S.Expect):
            if st.pattern is None:
                self.any_ports.add(st.port)
            else:
                self.expects[st.port].append(st)
        elif isinstance(st, S.NoPacket):
            pass
        elif isinstance(st, S.Wait):
            h.advance(int(st.amount * 1e6) if st.amount else WAIT_DEFAULT_US)
        elif isinstance(st, S.MirroringAdd):
            state.pre.set_session(CloneSession(st.session, ((st.port, 0),)))
        elif isinstance(st, S.MirroringAddMc):
            state.pre.set_session(CloneSession(st.session, (), mgrp=st.mgrp))
        elif isinstance(st, S.MirroringDelete):
            state.pre.sessions.pop(st.session, None)
        elif isinstance(st, S.MirroringGet):
            self.messages.append(f"mirroring session {st.session}: {state.pre.sessions.get(st.session)}")
        elif isinstance(st, S.McMgrpCreate):
            state.pre.mgrp_create(st.mgrp)
        elif isinstance(st, S.McNodeCreate):
            handle = state.pre.node_create(st.rid, st.ports)
            self.messages.append(f"mc node {handle} created (rid {st.rid}, ports {list(st.ports)})")
        elif isinstance(st, S.McNodeUpdate):
            state.pre.node_update(st.handle, st.ports)
        elif isinstance(st, S.McNodeAssociate):
            state.pre.node_associate(st.mgrp, st.handle)
        elif isinstance(st, S.RegisterRead):
            r = state.registers[S.resolve_name(state.registers, st.name, "register", st.loc)]
            self.messages.append(f"register {r.name}[{st.index}] = {r.read(st.index)}")
        elif isinstance(st, S.RegisterWrite):
            r = state.registers[S.resolve_name(state.registers, st.name, "register", st.loc)]
            r.write(st.index, st.value & ((1 << r.width) - 1) if hasattr(r, "width") else st.value)
        elif isinstance(st, S.RegisterReset):
            r = state.registers[S.resolve_name(state.registers, st.name, "register", st.loc)]
            r.reset()
        elif isinstance(st, S.CounterRead):
            c = self._counter(st.name, st.loc)
            self.messages.append(f"counter {st.name}[{st.index}] = {self._counter_value(c, st.index, st.loc)}")
        elif isinstance(st, S.CounterWrite):
            c = state.counters[S.resolve_name(state.counters, st.name, "counter", st.loc)]
            c.write(st.index, st.packets, st.bytes)
        elif isinstance(st, S.CheckCounter):
            c = self._counter(st.name, st.loc)
            packets, nbytes = self._counter_value(c, st.index, st.loc)
            kind = st.count_type or "packets"
            got = packets if kind == "packets" else nbytes
            ops = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
                   ">=": operator.ge}
            if not ops[st.op](got, st.value):
                self.failures.append(f"{st.loc}: check_counter {st.name}({st.index}): {kind} = {got}, expected "
                                     f"{st.op} {st.value}")
        elif isinstance(st, S.MeterGetRates):
            self.messages.append(f"meter {st.name}[{st.index}]")
        elif isinstance(st, S.MeterSetRates):
            self._meter_set(st)
        else:
            self.failures.append(f"{st.loc}: error: unsupported STF statement {type(st).__name__}")

    def _counter(self, name, loc):
        state = self.h.state
        names = list(state.counters) + list(state.direct_counters)
        full = S.resolve_name(names, name, "counter", loc)
        return state.counters.get(full) or state.direct_counters[full]

    def _counter_value(self, c, index, loc):
        if hasattr(c, "table") and not hasattr(c, "size"):   # direct counter: index is an entry handle
            e = self._entry_by_handle(c.table, index, loc)
            return (e.packet_count, e.byte_count)
        return c.read(index)

    def _entry_by_handle(self, table, index, loc):
        if isinstance(index, str):
            if index not in self.named_handles:
                raise P4Error(f"no entry handle {index!r}", loc)
            return self.named_handles[index]
        lst = self.handles.get(table, [])
        if not 0 <= index < len(lst):
            raise P4Error(f"table {table} has no entry with handle {index}", loc)
        return lst[index]

    def _meter_set(self, st: S.MeterSetRates):
        state = self.h.state
        names = list(state.meters) + list(state.direct_meters)
        full = S.resolve_name(names, st.name, "meter", st.loc)
        rates = st.rates
        if len(rates) == 1:
            rates = (rates[0], rates[0])
        if full in state.meters:
            m = state.meters[full]
            idxs = range(m.size) if st.index is None else [st.index]
            for i in idxs:
                m.cells[i].configure_us(rates)
        else:
            dm = state.direct_meters[full]
            entries = self.handles.get(dm.table, []) if st.index is None else \
                [self._entry_by_handle(dm.table, st.index, st.loc)]
            for e in entries:
                if e.meter is None:
                    e.meter = dm.new_cell()
                e.meter.configure_us(rates)

    # ------------------------------------------------------------------ final comparison
    def check_outputs(self) -> None:
        ports = sorted(set(self.expects) | set(self.outputs))
        for port in ports:
            exp = self.expects.get(port, [])
            got = self.outputs.get(port, [])
            for i, e in enumerate(exp):
                if i >= len(got):
                    self.failures.append(f"{e.loc}: port {port}: expected packet #{i + 1} did not arrive\n"
                                         f"    expected {_fmt_expect(e)}")
                    continue
                if not e.matches(got[i]):
                    g = _fmt(got[i])
                    pattern = e.pattern or ""  # None ("any packets") always matches
                    self.failures.append(
                        f"{e.loc}: port {port}: packet #{i + 1} differs\n"
                        f"    expected {_fmt_expect(e)}\n"
                        f"    actual   {g}\n"
                        f"             {_diff_line(pattern, g)}"
                        + ("\n    (expected the packet to end there: '$')" if e.exact and len(g) !=
                           len(pattern) else ""))
            if len(got) > len(exp) and port not in self.any_ports:
                for j in range(len(exp), len(got)):
                    self.failures.append(f"{self.stf_name}: port {port}: unexpected packet #{j + 1}: "
                                         f"{_fmt(got[j])}")


def run_stf(program_path: str, stf_path: str, seed: int = 1, include_dirs=None) -> StfResult:
    h = Harness.from_file(program_path, seed=seed, include_dirs=include_dirs)
    stmts = S.parse_stf_file(stf_path)
    return StfRunner(h, stf_path).run(stmts)
