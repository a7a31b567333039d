"""What BMv2's P4Runtime server does not offer, done over BMv2's Thrift runtime interface.

simple_switch_grpc's P4Runtime server is p4lang/PI. Its DeviceMgr answers every RegisterEntry write with
UNIMPLEMENTED ("Register writes are not supported yet") and every RegisterEntry read the same way (PI
issue #376, open), refuses ExternEntry writes (UNIMPLEMENTED) and reads ("Incorrect entity type"). ethlab
needs registers (port liveness `port_down`, queue maxima, the adaptive policy's learnt ports) and p4exec's
queue extern (queue rate/depth, port status). On BMv2 a `SwitchConnection` with a `Bmv2SideChannel`
attached sends register reads/writes and queue settings over the switch's persistent Thrift session
(controller/bmv2_thrift.py): `bm_register_read[_all]`, `bm_register_write`, `bm_register_reset`,
`set_[all_]egress_queue_depth[s]` (packets) and `set_[all_]egress_queue_rate[s]` (packets per second).
Port status has no equivalent: it raises a clear error."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import grpc
from p4.v1 import p4runtime_pb2 as pb

from controller.bmv2_thrift import SIMPLE_SWITCH, STANDARD, Bmv2ThriftError, i32, i64, session_for, string
from controller.codec import decode, encode
from controller.errors import ControllerError
from controller.p4info_index import P4InfoIndex

CONTEXT = 0  # simple_switch has one context


@dataclass(frozen=True)
class QueueSetting:
    """One egress-queue setting as BMv2 takes it: port 0 = every port; depth in packets, rate in packets/s."""

    port: int
    depth: int | None = None
    rate_pps: int | None = None


def queue_settings_for(port: int, depth: float | None = None, rate_pps: float | None = None) -> QueueSetting:
    """Whole packets and packets per second (BMv2's units); a positive rate is at least 1 (0 = unlimited)."""
    return QueueSetting(port, None if depth is None else int(depth),
                        None if rate_pps is None else (max(1, round(rate_pps)) if rate_pps else 0))


class Bmv2SideChannel:
    """One BMv2 switch's Thrift side, as used by SwitchConnection for what PI's P4Runtime server lacks."""

    def __init__(self, thrift_port: int | None, name: str = "bmv2") -> None:
        self.thrift_port = thrift_port
        self.name = name

    def call(self, service: str, method: str, *args: Any) -> Any:
        if self.thrift_port is None:
            raise Bmv2ThriftError(f"{self.name}: BMv2's P4Runtime server (PI) does not implement this; the "
                                  f"Thrift side channel needs the switch's Thrift port and none is known",
                                  grpc.StatusCode.UNIMPLEMENTED)
        return session_for(self.thrift_port, name=self.name).call(service, method, args)

    # ---- registers (RegisterEntry is UNIMPLEMENTED in PI) ---------------------------------------------------
    @staticmethod
    def _register(index: P4InfoIndex, register_id: int) -> Any:
        for reg in index.p4info.registers:
            if reg.preamble.id == register_id:
                return reg
        raise ControllerError(f"no register with id {register_id} in the P4Info", grpc.StatusCode.NOT_FOUND)

    def register_write(self, name: str, cell: int, value: int) -> None:
        self.call(STANDARD, "bm_register_write", i32(1, CONTEXT), string(2, name), i32(3, cell), i64(4, value))

    def register_reset(self, name: str) -> None:
        self.call(STANDARD, "bm_register_reset", i32(1, CONTEXT), string(2, name))

    def register_read(self, name: str, cell: int | None = None) -> dict[int, int]:
        if cell is not None:
            return {cell: self.call(STANDARD, "bm_register_read", i32(1, CONTEXT), string(2, name), i32(3, cell))}
        values = self.call(STANDARD, "bm_register_read_all", i32(1, CONTEXT), string(2, name))
        return dict(enumerate(values))

    def write_registers(self, updates: Iterable[pb.Update], index: P4InfoIndex) -> None:
        """MODIFY of RegisterEntry as bm_register_write (or bm_register_reset: a wildcard write of 0)."""
        for update in updates:
            entry = update.entity.register_entry
            if update.type != pb.Update.MODIFY:
                raise ControllerError("RegisterEntry updates must be MODIFY", grpc.StatusCode.INVALID_ARGUMENT)
            reg = self._register(index, entry.register_id)
            value = decode(entry.data.bitstring)
            if entry.HasField("index"):
                self.register_write(reg.preamble.name, entry.index.index, value)
            elif value == 0:
                self.register_reset(reg.preamble.name)
            else:
                for cell in range(reg.size):
                    self.register_write(reg.preamble.name, cell, value)

    def read_registers(self, entries: Iterable[pb.RegisterEntry], index: P4InfoIndex) -> list[pb.Entity]:
        """RegisterEntry reads (a cell, a whole register, or every register), answered as PI would."""
        found: list[pb.Entity] = []
        for query in entries:
            regs = [self._register(index, query.register_id)] if query.register_id else list(index.p4info.registers)
            single = query.index.index if query.register_id and query.HasField("index") else None
            for reg in regs:
                width = reg.type_spec.bitstring.bit.bitwidth
                for cell, value in sorted(self.register_read(reg.preamble.name, single).items()):
                    entity = pb.Entity()
                    entity.register_entry.register_id = reg.preamble.id
                    entity.register_entry.index.index = cell
                    entity.register_entry.data.bitstring = encode(value, width)
                    found.append(entity)
        return found

    # ---- p4exec's queue extern (ExternEntry: UNIMPLEMENTED in PI) ---------------------------------------------
    def apply(self, setting: QueueSetting) -> None:
        if setting.depth is not None:
            if setting.port:
                self.call(SIMPLE_SWITCH, "set_egress_queue_depth", i32(1, setting.port), i32(2, setting.depth))
            else:
                self.call(SIMPLE_SWITCH, "set_all_egress_queue_depths", i32(1, setting.depth))
        if setting.rate_pps is not None:
            if setting.port:
                self.call(SIMPLE_SWITCH, "set_egress_queue_rate", i32(1, setting.port), i64(2, setting.rate_pps))
            else:
                self.call(SIMPLE_SWITCH, "set_all_egress_queue_rates", i64(1, setting.rate_pps))

    def set_queue(self, port: int, depth: float | None = None, rate_pps: float | None = None,
                  rate_bps: float | None = None) -> None:
        if rate_bps is not None:
            raise ControllerError(f"{self.name}: BMv2 queues have packet rates only (set_egress_queue_rate); "
                                  f"rate_bps is a p4exec queue-extern setting", grpc.StatusCode.UNIMPLEMENTED)
        self.apply(queue_settings_for(port, depth, rate_pps))

    def queue_settings(self) -> dict[int, dict[str, Any]]:
        raise ControllerError(f"{self.name}: BMv2 cannot report queue settings (its Thrift interface only "
                              f"sets them)", grpc.StatusCode.UNIMPLEMENTED)

    def port_status(self) -> dict[int, bool]:
        raise ControllerError(f"{self.name}: BMv2 reports no port status over P4Runtime (PI has no extern "
                              f"support); port status is a p4exec queue-extern feature", grpc.StatusCode.UNIMPLEMENTED)
