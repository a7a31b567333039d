"""Execute parsed STF statements on a running BMv2: table, PRE, mirroring, register, counter and meter
statements as calls on one persistent Thrift session (controller/bmv2_thrift.py, the session the fabric's
side channel uses), packets through the nanomsg packet channel.

Order is kept as the file gives it, one packet at a time: after each packet the runner waits until the
switch sent what it will send (as many packets as p4exec did, when told, then a short quiet spell), so
the next packet, table change or read finds the switch idle with empty queues.
Expectations are checked by p4exec's STF runner code, on the packets BMv2 sent.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.bmv2_thrift import Bmv2ThriftError, ThriftSession
from difftest import runtime_calls as R
from difftest.bmv2 import ReferenceSwitch
from p4exec.errors import P4Error
from p4exec.harness import Harness
from p4exec.stf import parse as S
from p4exec.stf.runner import StfRunner

QUIET_S = 0.15   # no hint: the switch counts as done after this long without a packet
SETTLE_S = 0.03  # with a hint: after the expected packets, this long for any extra
MIRRORING = (S.MirroringAdd, S.MirroringAddMc, S.MirroringDelete, S.MirroringGet)
MULTICAST = (S.McMgrpCreate, S.McNodeCreate, S.McNodeUpdate, S.McNodeAssociate)


@dataclass
class Bmv2StfResult:
    outputs: dict[int, list[bytes]] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)  # register/counter values read, in file order

    @property
    def passed(self) -> bool:
        return not self.failures


class Bmv2StfRunner:
    def __init__(self, switch: ReferenceSwitch, json_path: Path, harness: Harness, stf_name: str,
                 expected_per_packet: list[int] | None = None) -> None:
        self.sw = switch
        self.names = R.Bmv2Names(json.loads(json_path.read_text()))
        self.harness = harness  # its tables say how STF key values become matches
        self.stf_name = stf_name
        self.thrift = ThriftSession(switch.thrift_port, name="difftest-bmv2")
        self.result = Bmv2StfResult()
        self.outputs: dict[int, list[bytes]] = defaultdict(list)
        self.handles: dict[str, list[int]] = defaultdict(list)
        self.named: dict[str, tuple[str, int]] = {}
        self.groups: dict[int, int] = {}  # multicast group id -> BMv2's group handle
        # How many packets the other target sent per input: BMv2 is then waited for only that long
        # (plus a short quiet spell), not a full QUIET_S after every packet.
        self.hints = list(expected_per_packet or [])

    def run(self, stmts: list[S.Stmt]) -> Bmv2StfResult:
        try:
            for st in stmts:
                try:
                    self.exec(st)
                except P4Error as e:
                    self.result.failures.append(str(e))
                except (KeyError, ValueError, IndexError, AssertionError) as e:
                    self.result.failures.append(f"{st.loc}: error: {type(e).__name__}: {e}")
            self.settle()
        finally:
            self.thrift.close()
        self.result.outputs = dict(self.outputs)
        self.result.failures += expectation_failures(self.harness, stmts, self.result.outputs, self.stf_name)
        return self.result

    # ------------------------------------------------------------------ helpers
    def settle(self) -> None:
        """Collect any packet still on its way (late clones, recirculations): QUIET_S of quiet."""
        for port, data in self.sw.packets.drain(QUIET_S):
            self.outputs[port].append(data)

    def invoke(self, st: S.Stmt, c: R.Call) -> Any:
        """The call's result; None (and a failure naming the statement) when BMv2 refuses it."""
        try:
            return self.thrift.call(c.service, c.method, c.args)
        except Bmv2ThriftError as e:
            self.result.failures.append(f"{st.loc}: BMv2 refused `{c.text}`: {e}")
            return None

    def _handle(self, table: str, index: int | str) -> int:
        if isinstance(index, str):
            return self.named[index][1]
        return self.handles[table][index]

    def _cell(self, info: dict[str, Any], index: int | str) -> int:
        """A direct counter's or meter's cell is its entry: the STF index is then the entry's handle."""
        if info.get("is_direct"):
            return self._handle(info["binding"], index)
        assert isinstance(index, int), index
        return index

    # ------------------------------------------------------------------ statements
    def exec(self, st: S.Stmt) -> None:
        if isinstance(st, S.Packet):
            # One packet at a time, as the STF runner of p4exec: the next one sees empty queues.
            self.sw.packets.send(st.port, st.data)
            expected = self.hints.pop(0) if self.hints else 0
            for port, data in self.sw.packets.collect(expected, SETTLE_S if expected else QUIET_S):
                self.outputs[port].append(data)
            return
        if isinstance(st, S.Expect | S.NoPacket):
            return
        names = self.names
        if isinstance(st, S.AddEntry):
            embedded = self.harness.state.tables[S.resolve_name(self.harness.state.tables, st.table, "table",
                                                                st.loc)]
            table, add = R.table_add(names, embedded, st)
            handle = self.invoke(st, add)
            if handle is not None:
                self.handles[table].append(handle)
                if st.handle:
                    self.named[st.handle] = (table, handle)
        elif isinstance(st, S.SetDefault):
            self.invoke(st, R.set_default(names, st))
        elif isinstance(st, S.RemoveAll):
            for clear in R.clear_tables(names):
                self.invoke(st, clear)
            self.handles.clear()
        elif isinstance(st, S.Wait):
            time.sleep(min(st.amount or 0.1, 5.0))
        elif isinstance(st, MIRRORING):
            self.invoke(st, R.mirroring(st))
        elif isinstance(st, MULTICAST):
            handle = self.invoke(st, R.multicast(st, self.groups))
            if isinstance(st, S.McMgrpCreate) and handle is not None:
                self.groups[st.mgrp] = handle
        elif isinstance(st, S.RegisterRead | S.RegisterWrite | S.RegisterReset):
            self._register(st)
        elif isinstance(st, S.CounterRead):
            value = self._counter(st, st.name, st.index)
            self.result.reads.append(f"counter {st.name}[{st.index}] = {value if value else '?'}")
        elif isinstance(st, S.CounterWrite):
            full = S.resolve_name(names.counters, st.name, "counter", st.loc)
            self.invoke(st, R.counter_cell(names, full, self._cell(names.counters[full], st.index), "write",
                                           R.counter_value(st.packets, st.bytes)))
        elif isinstance(st, S.CheckCounter):
            self._check_counter(st)
        elif isinstance(st, S.MeterGetRates):
            full = S.resolve_name(names.meters, st.name, "meter", st.loc)
            self.invoke(st, R.meter_get(names, full, self._cell(names.meters[full], st.index)))
        elif isinstance(st, S.MeterSetRates):
            full = S.resolve_name(names.meters, st.name, "meter", st.loc)
            rates = list(st.rates if len(st.rates) > 1 else st.rates * 2)
            cell = None if st.index is None else self._cell(names.meters[full], st.index)
            self.invoke(st, R.meter_rates(names, full, cell, rates))
        else:
            self.result.failures.append(f"{st.loc}: error: the BMv2 runner has no {type(st).__name__}")

    def _register(self, st: S.RegisterRead | S.RegisterWrite | S.RegisterReset) -> None:
        name = S.resolve_name(self.names.registers, st.name, "register", st.loc)
        value = self.invoke(st, R.register(st, name))
        if isinstance(st, S.RegisterRead):
            self.result.reads.append(f"register {name}[{st.index}] = {'?' if value is None else value}")

    def _counter(self, st: S.Stmt, name: str, index: int | str) -> tuple[int, int] | None:
        """(packets, bytes) of a counter cell, or of a direct counter's entry (index = STF entry handle)."""
        full = S.resolve_name(self.names.counters, name, "counter", st.loc)
        value = self.invoke(st, R.counter_cell(self.names, full, self._cell(self.names.counters[full], index),
                                               "read"))
        return None if value is None else (value.get(2, 0), value.get(1, 0))  # BmCounterValue: 1 bytes, 2 packets

    def _check_counter(self, st: S.CheckCounter) -> None:
        value = self._counter(st, st.name, st.index)
        if value is None:
            return  # the refusal is already a failure
        packets, nbytes = value
        kind = st.count_type or "packets"
        got = packets if kind == "packets" else nbytes
        if not _compare(st.op, got, st.value):
            self.result.failures.append(f"{st.loc}: check_counter {st.name}({st.index}): {kind} = {got}, "
                                        f"expected {st.op} {st.value}")


def _compare(op: str, got: int, want: int) -> bool:
    return {"==": got == want, "!=": got != want, "<": got < want, "<=": got <= want, ">": got > want,
            ">=": got >= want}[op]


def expectation_failures(harness: Harness, stmts: list[S.Stmt], outputs: dict[int, list[bytes]],
                         stf_name: str) -> list[str]:
    """The `expect` lines' verdict on some packets, worded as p4exec's STF runner words it."""
    checker = StfRunner(harness, stf_name)
    for st in S.iter_statements(stmts, S.Expect):
        checker.exec(st)
    checker.outputs.update(outputs)
    checker.check_outputs()
    return checker.failures
