"""One persistent Thrift session per BMv2 switch, speaking the calls ethlab needs.

BMv2 serves its runtime interface over Thrift (binary protocol, buffered transport, one multiplexed
server: service `standard` for tables, registers, counters and meters, `simple_pre_lag` for multicast,
`simple_switch` for queues and mirroring; the fabric's side channel uses registers and queues, difftest's
STF runner the rest). simple_switch_CLI starts a Python
process, fetches the switch's JSON and opens a new connection for every batch of commands (2.2 s per
register read vs 0.57 ms on a kept session, measured on the loaded 2-core machine); the experiment sampler reads registers ten times a second, so ethlab keeps one connection per
switch instead and encodes the calls itself with the `thrift` library's protocol classes (no generated
code: each call is a method name and its numbered, typed arguments, as in BMv2's `.thrift` files).

A broken connection (the switch restarted, the port was not open yet) is reopened once per call; every
call is idempotent (a register write, a queue setting), so sending it again is safe."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import grpc

from controller.errors import ControllerError

try:  # the `bmv2` extra; without it only the BMv2 side channel is unavailable
    from thrift.protocol.TBinaryProtocol import TBinaryProtocol
    from thrift.protocol.TMultiplexedProtocol import TMultiplexedProtocol
    from thrift.Thrift import TApplicationException, TException, TMessageType, TType
    from thrift.transport.TSocket import TSocket
    from thrift.transport.TTransport import TBufferedTransport
except ImportError:  # pragma: no cover - exercised only where the package is absent
    TBinaryProtocol = None  # type: ignore[assignment,misc]

STANDARD = "standard"  # bm_mt_*, bm_register_*, bm_counter_*, bm_meter_* (BMv2's standard.thrift)
SIMPLE_SWITCH = "simple_switch"  # set_egress_queue_*, mirroring_session_* (simple_switch.thrift)


class Bmv2ThriftError(ControllerError):
    """The BMv2 Thrift side channel is unavailable, unreachable or refused a call (the message says which)."""


SIMPLE_PRE = "simple_pre_lag"  # bm_mc_* (the multicast engine simple_switch runs)

# What the `code` of BMv2's declared exceptions means, by the method family that raised it (each family
# has its own error enum in BMv2's .thrift files; only the codes ethlab meets are named).
REGISTER_ERRORS = {1: "no such register", 2: "index out of range", 3: "error"}
REFUSALS: dict[str, dict[int, str]] = {
    "bm_register_": REGISTER_ERRORS,
    "bm_mt_": {1: "table full", 2: "invalid entry handle", 7: "no such table", 8: "no such action",
               9: "wrong table type", 17: "duplicate entry", 18: "bad match key", 20: "default action is const",
               21: "default entry is const", 25: "immutable table entries", 26: "bad action data", 100: "error"},
    "bm_counter_": {1: "no such counter", 2: "index out of range", 3: "error"},
    "bm_meter_": {1: "no such meter", 2: "index out of range", 3: "bad rates list", 4: "invalid rate",
                  5: "invalid burst size", 6: "error"},
    "bm_mc_": {1: "table full", 2: "invalid multicast group", 3: "invalid group handle", 4: "invalid node handle",
               5: "error"},
    "mirroring_session_": {1: "session not found"},
}


@dataclass(frozen=True)
class Arg:
    """One numbered argument of a Thrift call."""

    field_id: int
    ttype: int
    value: Any


def i32(field_id: int, value: int) -> Arg:
    return Arg(field_id, TType.I32, int(value))


def i64(field_id: int, value: int) -> Arg:
    return Arg(field_id, TType.I64, int(value))


def string(field_id: int, value: str) -> Arg:
    return Arg(field_id, TType.STRING, value)


def binary(field_id: int, value: bytes) -> Arg:
    """Thrift `binary` (a string on the wire, sent as raw bytes): match keys, masks, action data."""
    return Arg(field_id, TType.STRING, bytes(value))


def boolean(field_id: int, value: bool) -> Arg:
    return Arg(field_id, TType.BOOL, bool(value))


def double(field_id: int, value: float) -> Arg:
    return Arg(field_id, TType.DOUBLE, float(value))


def struct(field_id: int, *fields: Arg) -> Arg:
    """A struct argument (or struct field): its own numbered fields; optional fields left out are unset."""
    return Arg(field_id, TType.STRUCT, tuple(fields))


@dataclass(frozen=True)
class ListValue:
    """The elements of a Thrift list and their type (a struct element is a tuple of its fields' Args)."""

    etype: int
    items: tuple[Any, ...]


def list_of(field_id: int, etype: int, items: Sequence[Any]) -> Arg:
    return Arg(field_id, TType.LIST, ListValue(etype, tuple(items)))


def structs(field_id: int, items: Sequence[Sequence[Arg]]) -> Arg:
    """A list of structs, each given as its fields."""
    return list_of(field_id, TType.STRUCT, [tuple(item) for item in items])


def binaries(field_id: int, items: Sequence[bytes]) -> Arg:
    return list_of(field_id, TType.STRING, [bytes(item) for item in items])


class ThriftSession:
    """A connection to one BMv2 Thrift server; calls are serialised (the sampler and faults share it)."""

    def __init__(self, port: int, host: str = "127.0.0.1", timeout: float = 10.0, name: str = "bmv2") -> None:
        if TBinaryProtocol is None:
            raise Bmv2ThriftError(f"{name}: the BMv2 side channel needs the Python package 'thrift' "
                                  f"(pip install 'ethlab[bmv2]')", grpc.StatusCode.UNIMPLEMENTED)
        self.host, self.port, self.timeout, self.name = host, port, timeout, name
        self._lock = threading.Lock()
        self._transport: Any = None
        self._protocol: Any = None
        self._seq = 0
        self.connects = 0  # how many connections this session opened (one unless the switch restarted)

    def _open(self) -> None:
        sock = TSocket(self.host, self.port)
        sock.setTimeout(self.timeout * 1000)
        transport = TBufferedTransport(sock)
        try:
            transport.open()
        except TException as err:
            raise Bmv2ThriftError(f"{self.name}: BMv2 Thrift server {self.host}:{self.port} unreachable: {err}",
                                  grpc.StatusCode.UNAVAILABLE) from None
        self._transport, self._protocol = transport, TBinaryProtocol(transport)
        self.connects += 1

    def close(self) -> None:
        with self._lock:
            self._drop()

    def _drop(self) -> None:
        if self._transport is not None:
            try:
                self._transport.close()
            except (TException, OSError):
                pass
        self._transport = self._protocol = None

    def call(self, service: str, method: str, args: Sequence[Arg] = ()) -> Any:
        """Send one call and return its result (None for void); a declared exception -> Bmv2ThriftError."""
        with self._lock:
            for attempt in (1, 2):
                if self._transport is None:
                    self._open()
                try:
                    return self._exchange(service, method, args)
                except (TException, OSError, EOFError) as err:
                    if isinstance(err, _Refused):
                        raise Bmv2ThriftError(f"{self.name}: {service}.{method}: {err}",
                                              grpc.StatusCode.INVALID_ARGUMENT) from None
                    self._drop()
                    if attempt == 2:
                        raise Bmv2ThriftError(f"{self.name}: BMv2 Thrift {self.host}:{self.port} "
                                              f"{service}.{method}: {err or type(err).__name__}",
                                              grpc.StatusCode.UNAVAILABLE) from None
        raise AssertionError("unreachable")

    def _exchange(self, service: str, method: str, args: Sequence[Arg]) -> Any:
        self._seq += 1
        out = TMultiplexedProtocol(self._protocol, service)
        out.writeMessageBegin(method, TMessageType.CALL, self._seq)
        _write_struct(out, f"{method}_args", args)
        out.writeMessageEnd()
        self._transport.flush()
        proto = self._protocol
        _name, kind, _seq = proto.readMessageBegin()
        if kind == TMessageType.EXCEPTION:
            failure = TApplicationException()
            failure.read(proto)
            proto.readMessageEnd()
            raise _Refused(failure.message or f"application error {failure.type}")
        result: Any = None
        refused: dict[int, Any] | None = None
        proto.readStructBegin()
        while True:
            _fname, ftype, fid = proto.readFieldBegin()
            if ftype == TType.STOP:
                break
            if fid == 0:
                result = _read(proto, ftype)
            elif ftype == TType.STRUCT:  # a declared exception: every BMv2 one carries `code` as field 1
                refused = _read(proto, ftype)
            else:
                proto.skip(ftype)
            proto.readFieldEnd()
        proto.readStructEnd()
        proto.readMessageEnd()
        if refused is not None:
            code = refused.get(1)
            family = next((names for prefix, names in REFUSALS.items() if method.startswith(prefix)), {})
            meaning = family.get(code, "") if isinstance(code, int) else ""
            raise _Refused(f"refused (code {code}{': ' + meaning if meaning else ''})")
        return result


class _Refused(TException if TBinaryProtocol is not None else Exception):  # type: ignore[misc]
    """The server answered with an error: not a transport failure, so never retried."""


def _write_struct(out: Any, name: str, fields: Sequence[Arg]) -> None:
    """A call's argument struct and a nested struct are written alike (field names are not on the wire)."""
    out.writeStructBegin(name)
    for arg in fields:
        out.writeFieldBegin(f"f{arg.field_id}", arg.ttype, arg.field_id)
        _write(out, arg.ttype, arg.value)
        out.writeFieldEnd()
    out.writeFieldStop()
    out.writeStructEnd()


def _write(out: Any, ttype: int, value: Any) -> None:
    if ttype == TType.I32:
        out.writeI32(value)
    elif ttype == TType.I64:
        out.writeI64(value)
    elif ttype == TType.I16:
        out.writeI16(value)
    elif ttype == TType.BOOL:
        out.writeBool(value)
    elif ttype == TType.DOUBLE:
        out.writeDouble(value)
    elif ttype == TType.STRING:
        if isinstance(value, bytes):
            out.writeBinary(value)
        else:
            out.writeString(value)
    elif ttype == TType.STRUCT:
        _write_struct(out, "s", value)
    elif ttype == TType.LIST:
        out.writeListBegin(value.etype, len(value.items))
        for item in value.items:
            _write(out, value.etype, item)
        out.writeListEnd()
    else:
        raise TypeError(f"Thrift argument type {ttype} not supported")


def _read(proto: Any, ttype: int) -> Any:
    """One value of a result; strings come back as bytes (BMv2's are `binary` or ASCII), structs as {id: value}."""
    if ttype == TType.I32:
        return proto.readI32()
    if ttype == TType.I64:
        return proto.readI64()
    if ttype == TType.I16:
        return proto.readI16()
    if ttype == TType.BOOL:
        return proto.readBool()
    if ttype == TType.DOUBLE:
        return proto.readDouble()
    if ttype == TType.STRING:
        return proto.readBinary()
    if ttype == TType.LIST:
        etype, size = proto.readListBegin()
        items = [_read(proto, etype) for _ in range(size)]
        proto.readListEnd()
        return items
    if ttype == TType.STRUCT:
        fields: dict[int, Any] = {}
        proto.readStructBegin()
        while True:
            _fname, ftype, fid = proto.readFieldBegin()
            if ftype == TType.STOP:
                break
            fields[fid] = _read(proto, ftype)
            proto.readFieldEnd()
        proto.readStructEnd()
        return fields
    proto.skip(ttype)
    return None


_SESSIONS: dict[tuple[str, int], ThriftSession] = {}
_SESSIONS_LOCK = threading.Lock()


def session_for(port: int, host: str = "127.0.0.1", name: str = "bmv2") -> ThriftSession:
    """The process's one session with the switch on this Thrift port (opened at first use)."""
    with _SESSIONS_LOCK:
        sess = _SESSIONS.get((host, port))
        if sess is None:
            sess = _SESSIONS[(host, port)] = ThriftSession(port, host, name=name)
        return sess


def forget_session(port: int, host: str = "127.0.0.1") -> None:
    """Close and drop a switch's session (its process stopped)."""
    with _SESSIONS_LOCK:
        sess = _SESSIONS.pop((host, port), None)
    if sess is not None:
        sess.close()
