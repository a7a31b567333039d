"""A stand-in for BMv2's Thrift server, for the side-channel tests that run without BMv2: it decodes each
call with the `thrift` library (service:method, numbered arguments), records it, and answers the register
calls from a dict and the queue calls with nothing, the way BMv2's services are declared. The tests
against the real server are in tests/controller/test_bmv2_switch.py."""

from __future__ import annotations

import socket
import threading
from typing import Any

from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.Thrift import TMessageType, TType
from thrift.transport.TSocket import TSocket
from thrift.transport.TTransport import TBufferedTransport, TTransportException


class FakeBmv2Thrift:
    def __init__(self, registers: dict[str, list[int]]) -> None:
        self.registers = registers
        self.calls: list[tuple[Any, ...]] = []
        self.accepted = 0
        self._open: list[socket.socket] = []
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(4)
        self.port = self.listener.getsockname()[1]
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop listening (shutdown wakes the blocked accept, so the port really closes) and hang up."""
        try:
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.listener.close()
        for sock in self._open:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _serve(self) -> None:
        while True:
            try:
                sock, _ = self.listener.accept()
            except OSError:
                return
            self.accepted += 1
            self._open.append(sock)
            threading.Thread(target=self._connection, args=(sock,), daemon=True).start()

    def _connection(self, sock: socket.socket) -> None:
        wrapped = TSocket()
        wrapped.handle = sock
        transport = TBufferedTransport(wrapped)
        proto = TBinaryProtocol(transport)
        try:
            while True:
                name, _kind, seq = proto.readMessageBegin()
                args = self._args(proto)
                proto.readMessageEnd()
                service, _, method = name.partition(":")
                self.calls.append((service, method, *(args[k] for k in sorted(args))))
                proto.writeMessageBegin(method, TMessageType.REPLY, seq)
                proto.writeStructBegin("result")
                self._answer(proto, method, args)
                proto.writeFieldStop()
                proto.writeStructEnd()
                proto.writeMessageEnd()
                transport.flush()
        except (TTransportException, OSError, EOFError):
            sock.close()

    @staticmethod
    def _args(proto: TBinaryProtocol) -> dict[int, Any]:
        args: dict[int, Any] = {}
        proto.readStructBegin()
        while True:
            _n, ftype, fid = proto.readFieldBegin()
            if ftype == TType.STOP:
                break
            args[fid] = {TType.I32: proto.readI32, TType.I64: proto.readI64, TType.STRING: proto.readString}[ftype]()
            proto.readFieldEnd()
        proto.readStructEnd()
        return args

    def _answer(self, proto: TBinaryProtocol, method: str, args: dict[int, Any]) -> None:
        if not method.startswith("bm_register"):
            return  # queue settings: void (set_egress_queue_rate's i32 result left out, as a server may)
        cells = self.registers.get(args[2])
        if cells is None or (3 in args and args[3] >= len(cells)):  # field 3: the index (read, write)
            proto.writeFieldBegin("ouch", TType.STRUCT, 1)
            proto.writeStructBegin("InvalidRegisterOperation")
            proto.writeFieldBegin("code", TType.I32, 1)
            proto.writeI32(1 if cells is None else 2)
            proto.writeFieldEnd()
            proto.writeFieldStop()
            proto.writeStructEnd()
            proto.writeFieldEnd()
        elif method == "bm_register_read":
            proto.writeFieldBegin("success", TType.I64, 0)
            proto.writeI64(cells[args[3]])
            proto.writeFieldEnd()
        elif method == "bm_register_read_all":
            proto.writeFieldBegin("success", TType.LIST, 0)
            proto.writeListBegin(TType.I64, len(cells))
            for value in cells:
                proto.writeI64(value)
            proto.writeListEnd()
            proto.writeFieldEnd()
        elif method == "bm_register_write":
            cells[args[3]] = args[4]
        elif method == "bm_register_reset":
            cells[:] = [0] * len(cells)
