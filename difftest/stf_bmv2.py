"""Execute parsed STF statements on a running BMv2: table and PRE commands through `simple_switch_CLI`,
packets through the nanomsg packet channel.

Order is kept as the file gives it, one packet at a time: after each packet the runner waits until the
switch sent what it will send (as many packets as p4exec did, when told, then a short quiet spell), so
the next packet, table change or read finds the switch idle with empty queues.
Expectations are checked by p4exec's STF runner code, on the packets BMv2 sent.
"""

from __future__ import annotations

import json
import re
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from difftest.bmv2 import ReferenceSwitch
from difftest.cli import CliSession
from difftest.cli_syntax import Bmv2Names, action_words, table_add
from p4exec.errors import P4Error
from p4exec.harness import Harness
from p4exec.stf import parse as S
from p4exec.stf.runner import StfRunner

QUIET_S = 0.15   # no hint: the switch counts as done after this long without a packet
SETTLE_S = 0.03  # with a hint: after the expected packets, this long for any extra
_HANDLE = re.compile(r"added with handle (\d+)")
_COUNTER = re.compile(r"\((\d+) bytes, (\d+) packets\)")
_REGISTER = re.compile(r"\]\s*=\s*(\d+)")


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
        self.names = Bmv2Names(json.loads(json_path.read_text()))
        self.harness = harness  # its tables say how STF key values become matches
        self.stf_name = stf_name
        self.cli = CliSession(switch.thrift_port)
        self.result = Bmv2StfResult()
        self.outputs: dict[int, list[bytes]] = defaultdict(list)
        self.handles: dict[str, list[int]] = defaultdict(list)
        self.named: dict[str, tuple[str, int]] = {}
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
            self.cli.close()
        self.result.outputs = dict(self.outputs)
        self.result.failures += expectation_failures(self.harness, stmts, self.result.outputs, self.stf_name)
        return self.result

    # ------------------------------------------------------------------ helpers
    def settle(self) -> None:
        """Collect any packet still on its way (late clones, recirculations): QUIET_S of quiet."""
        for port, data in self.sw.packets.drain(QUIET_S):
            self.outputs[port].append(data)

    def cli_run(self, st: S.Stmt, command: str) -> str:
        answer = self.cli.run(command)
        if self.cli.failed(answer):
            self.result.failures.append(f"{st.loc}: BMv2 refused `{command}`: {answer.strip()}")
        return answer

    def _handle(self, table: str, index: int | str) -> int:
        if isinstance(index, str):
            return self.named[index][1]
        return self.handles[table][index]

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
            table, command = table_add(names, embedded, st)
            m = _HANDLE.search(self.cli_run(st, command))
            if m:
                self.handles[table].append(int(m.group(1)))
                if st.handle:
                    self.named[st.handle] = (table, int(m.group(1)))
        elif isinstance(st, S.SetDefault):
            table = names.table(st.table, st.loc)
            self.cli_run(st, " ".join(["table_set_default", table, *action_words(names, table, st.action,
                                                                                   st.loc)]))
        elif isinstance(st, S.RemoveAll):
            for table in names.tables:
                self.cli_run(st, f"table_clear {table}")
            self.handles.clear()
        elif isinstance(st, S.Wait):
            time.sleep(min(st.amount or 0.1, 5.0))
        elif isinstance(st, S.MirroringAdd):
            self.cli_run(st, f"mirroring_add {st.session} {st.port}")
        elif isinstance(st, S.MirroringAddMc):
            self.cli_run(st, f"mirroring_add_mc {st.session} {st.mgrp}")
        elif isinstance(st, S.MirroringDelete):
            self.cli_run(st, f"mirroring_delete {st.session}")
        elif isinstance(st, S.MirroringGet):
            self.cli_run(st, f"mirroring_get {st.session}")
        elif isinstance(st, S.McMgrpCreate):
            self.cli_run(st, f"mc_mgrp_create {st.mgrp}")
        elif isinstance(st, S.McNodeCreate):
            self.cli_run(st, f"mc_node_create {st.rid} {' '.join(map(str, st.ports))}")
        elif isinstance(st, S.McNodeUpdate):
            self.cli_run(st, f"mc_node_update {st.handle} {' '.join(map(str, st.ports))}")
        elif isinstance(st, S.McNodeAssociate):
            self.cli_run(st, f"mc_node_associate {st.mgrp} {st.handle}")
        elif isinstance(st, S.RegisterRead):
            name = S.resolve_name(names.registers, st.name, "register", st.loc)
            m = _REGISTER.search(self.cli_run(st, f"register_read {name} {st.index}"))
            self.result.reads.append(f"register {name}[{st.index}] = {m.group(1) if m else '?'}")
        elif isinstance(st, S.RegisterWrite):
            name = S.resolve_name(names.registers, st.name, "register", st.loc)
            self.cli_run(st, f"register_write {name} {st.index} {st.value}")
        elif isinstance(st, S.RegisterReset):
            self.cli_run(st, f"register_reset {S.resolve_name(names.registers, st.name, 'register', st.loc)}")
        elif isinstance(st, S.CounterRead):
            self.result.reads.append(f"counter {st.name}[{st.index}] = {self._counter(st, st.name, st.index)}")
        elif isinstance(st, S.CounterWrite):
            name = S.resolve_name(names.counters, st.name, "counter", st.loc)
            self.cli_run(st, f"counter_write {name} {st.index} {st.packets} {st.bytes}")
        elif isinstance(st, S.CheckCounter):
            self._check_counter(st)
        elif isinstance(st, S.MeterGetRates):
            self.cli_run(st, f"meter_get_rates {S.resolve_name(names.meters, st.name, 'meter', st.loc)} {st.index}")
        elif isinstance(st, S.MeterSetRates):
            self._meter_set(st)
        else:
            self.result.failures.append(f"{st.loc}: error: the BMv2 runner has no {type(st).__name__}")

    def _counter(self, st: S.Stmt, name: str, index: int | str) -> tuple[int, int]:
        """(packets, bytes) of a counter cell, or of a direct counter's entry (index = STF entry handle)."""
        full = S.resolve_name(self.names.counters, name, "counter", st.loc)
        info = self.names.counters[full]
        cell = self._handle(info["binding"], index) if info.get("is_direct") else index
        m = _COUNTER.search(self.cli_run(st, f"counter_read {full} {cell}"))
        if m is None:
            raise ValueError(f"counter_read {full} {cell}: no value in the answer")
        return int(m.group(2)), int(m.group(1))

    def _check_counter(self, st: S.CheckCounter) -> None:
        packets, nbytes = self._counter(st, st.name, st.index)
        kind = st.count_type or "packets"
        got = packets if kind == "packets" else nbytes
        if not _compare(st.op, got, st.value):
            self.result.failures.append(f"{st.loc}: check_counter {st.name}({st.index}): {kind} = {got}, "
                                        f"expected {st.op} {st.value}")

    def _meter_set(self, st: S.MeterSetRates) -> None:
        full = S.resolve_name(self.names.meters, st.name, "meter", st.loc)
        rates = " ".join(f"{rate:g}:{burst}" for rate, burst in (st.rates if len(st.rates) > 1 else
                                                                   st.rates * 2))
        info = self.names.meters[full]
        if st.index is None:
            self.cli_run(st, f"meter_array_set_rates {full} {rates}")
        else:
            cell = self._handle(info["binding"], st.index) if info.get("is_direct") else st.index
            self.cli_run(st, f"meter_set_rates {full} {cell} {rates}")


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
