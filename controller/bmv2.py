"""What BMv2's P4Runtime server does not offer, done over Thrift with `simple_switch_CLI`.

simple_switch_grpc's P4Runtime server is p4lang/PI. Its DeviceMgr answers every RegisterEntry write with
UNIMPLEMENTED ("Register writes are not supported yet") and every RegisterEntry read the same way (PI
issue #376, open), refuses ExternEntry writes (UNIMPLEMENTED) and reads ("Incorrect entity type"). ethlab
needs registers (port liveness `port_down`, queue maxima, the adaptive policy's learnt ports) and p4exec's
queue extern (queue rate/depth, port status). On BMv2 a `SwitchConnection` with a `Bmv2Cli` attached
sends register reads/writes and queue settings to `simple_switch_CLI --thrift-port N` instead:
`register_read NAME [INDEX]`, `register_write NAME INDEX VALUE`, `register_reset NAME`,
`set_queue_rate PPS PORT`, `set_queue_depth PACKETS PORT` (sswitch_CLI.py: integers, packets per second,
packets). Port status has no equivalent: it raises a clear error.

The CLI reads commands from stdin and reports a bad command or a Thrift error as text while exiting 0, so
the output is checked for the messages runtime_CLI prints."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from typing import Any

import grpc
from p4.v1 import p4runtime_pb2 as pb

from controller.codec import decode, encode
from controller.errors import ControllerError
from controller.p4info_index import P4InfoIndex

CLI = "simple_switch_CLI"
_FAILED = re.compile(r"(?i)(\binvalid\b|\berror\b|could not|unknown syntax|traceback|bad format|exception|usage:)")
_ONE = re.compile(r"(?P<name>[\w.]+)\[(?P<index>\d+)\]\s*=\s*(?P<value>\d+)")
_ALL = re.compile(r"(?P<name>[\w.]+)\s*=\s*(?P<values>\d+(?:\s*,\s*\d+)*)\s*$")


class Bmv2CliError(ControllerError):
    """simple_switch_CLI missing, not reaching the switch, or refusing a command (the message quotes it)."""


def run_cli(thrift_port: int, commands: Sequence[str], timeout: float = 30.0, tool: str = CLI) -> str:
    """Run commands through simple_switch_CLI on a switch's Thrift port; its output, or Bmv2CliError."""
    exe = shutil.which(tool)
    if exe is None:
        raise Bmv2CliError(f"{tool} not found: BMv2 registers and queues need it (it comes with BMv2; "
                           f"see 'ethlab doctor')", grpc.StatusCode.UNIMPLEMENTED)
    try:
        done = subprocess.run([exe, "--thrift-port", str(thrift_port)], input="\n".join(commands) + "\n",
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise Bmv2CliError(f"{tool} --thrift-port {thrift_port}: no answer within {timeout:g}s",
                           grpc.StatusCode.DEADLINE_EXCEEDED) from None
    output = done.stdout + done.stderr
    # answers (`NAME[I]= V`, `NAME= V, ...`) are data: a register may well be called `error`
    bad = [ln.strip() for ln in output.splitlines() if _FAILED.search(_ALL.sub("", _ONE.sub("", ln)))]
    if done.returncode != 0 or bad:
        detail = "; ".join(bad[:5]) or output.strip()[-500:] or f"exit status {done.returncode}"
        raise Bmv2CliError(f"{tool} --thrift-port {thrift_port} ({'; '.join(commands)[:200]}): {detail}",
                           grpc.StatusCode.UNKNOWN)
    return output


def queue_commands(port: int, depth: float | None = None, rate_pps: float | None = None) -> list[str]:
    """sswitch_CLI queue commands for one egress port (0 = all ports); rates are whole packets per second."""
    commands = []
    where = f" {port}" if port else ""
    if depth is not None:
        commands.append(f"set_queue_depth {int(depth)}{where}")
    if rate_pps is not None:
        commands.append(f"set_queue_rate {max(1, round(rate_pps)) if rate_pps else 0}{where}")
    return commands


class Bmv2Cli:
    """One BMv2 switch's Thrift side, as used by SwitchConnection for what PI's P4Runtime server lacks."""

    def __init__(self, thrift_port: int | None, name: str = "bmv2", timeout: float = 30.0) -> None:
        self.thrift_port = thrift_port
        self.name = name
        self.timeout = timeout

    def run(self, commands: Sequence[str]) -> str:
        if self.thrift_port is None:
            raise Bmv2CliError(f"{self.name}: BMv2's P4Runtime server (PI) does not implement this; the "
                               f"simple_switch_CLI fallback needs the switch's Thrift port and none is known",
                               grpc.StatusCode.UNIMPLEMENTED)
        return run_cli(self.thrift_port, commands, self.timeout)

    # ---- registers (RegisterEntry is UNIMPLEMENTED in PI) ---------------------------------------------------
    @staticmethod
    def _register(index: P4InfoIndex, register_id: int) -> Any:
        for reg in index.p4info.registers:
            if reg.preamble.id == register_id:
                return reg
        raise ControllerError(f"no register with id {register_id} in the P4Info", grpc.StatusCode.NOT_FOUND)

    def write_registers(self, updates: Iterable[pb.Update], index: P4InfoIndex) -> None:
        """MODIFY of RegisterEntry as register_write (or register_reset: a wildcard write of 0)."""
        commands: list[str] = []
        for update in updates:
            entry = update.entity.register_entry
            if update.type != pb.Update.MODIFY:
                raise ControllerError("RegisterEntry updates must be MODIFY", grpc.StatusCode.INVALID_ARGUMENT)
            reg = self._register(index, entry.register_id)
            value = decode(entry.data.bitstring)
            if entry.HasField("index"):
                commands.append(f"register_write {reg.preamble.name} {entry.index.index} {value}")
            elif value == 0:
                commands.append(f"register_reset {reg.preamble.name}")
            else:
                commands += [f"register_write {reg.preamble.name} {i} {value}" for i in range(reg.size)]
        if commands:
            self.run(commands)

    def read_registers(self, entries: Iterable[pb.RegisterEntry], index: P4InfoIndex) -> list[pb.Entity]:
        """RegisterEntry reads as register_read, all in one CLI run; answered as the entities PI would give."""
        asked: list[tuple[Any, int | None]] = []
        for query in entries:
            regs = [self._register(index, query.register_id)] if query.register_id else list(index.p4info.registers)
            single = query.index.index if query.register_id and query.HasField("index") else None
            asked += [(reg, single) for reg in regs]
        if not asked:
            return []
        out = self.run([f"register_read {reg.preamble.name}" + ("" if i is None else f" {i}") for reg, i in asked])
        answers: dict[tuple[str, int | None], dict[int, int]] = {}
        for line in out.splitlines():
            one = _ONE.search(line)
            if one:
                answers[(one["name"], int(one["index"]))] = {int(one["index"]): int(one["value"])}
                continue
            every = _ALL.search(line)
            if every:
                answers[(every["name"], None)] = {i: int(v) for i, v in enumerate(every["values"].split(","))}
        found: list[pb.Entity] = []
        for reg, i in asked:
            values = answers.get((reg.preamble.name, i))
            if values is None:
                raise Bmv2CliError(f"{self.name}: no register_read answer for {reg.preamble.name}"
                                   f"{'' if i is None else f'[{i}]'}: {out.strip()[-300:]}")
            width = reg.type_spec.bitstring.bit.bitwidth
            for cell, value in sorted(values.items()):
                entity = pb.Entity()
                entity.register_entry.register_id = reg.preamble.id
                entity.register_entry.index.index = cell
                entity.register_entry.data.bitstring = encode(value, width)
                found.append(entity)
        return found

    # ---- p4exec's queue extern (ExternEntry: UNIMPLEMENTED in PI) ---------------------------------------------
    def set_queue(self, port: int, depth: float | None = None, rate_pps: float | None = None,
                  rate_bps: float | None = None) -> None:
        if rate_bps is not None:
            raise ControllerError(f"{self.name}: BMv2 queues have packet rates only (set_queue_rate); "
                                  f"rate_bps is a p4exec queue-extern setting", grpc.StatusCode.UNIMPLEMENTED)
        commands = queue_commands(port, depth, rate_pps)
        if commands:
            self.run(commands)

    def queue_settings(self) -> dict[int, dict[str, Any]]:
        raise ControllerError(f"{self.name}: BMv2 cannot report queue settings (simple_switch_CLI only sets "
                              f"them)", grpc.StatusCode.UNIMPLEMENTED)

    def port_status(self) -> dict[int, bool]:
        raise ControllerError(f"{self.name}: BMv2 reports no port status over P4Runtime (PI has no extern "
                              f"support); port status is a p4exec queue-extern feature", grpc.StatusCode.UNIMPLEMENTED)
