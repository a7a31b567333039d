"""`p4exec queue`: set or show egress queues of a running switch over P4Runtime.

Uses the queue extension of docs/architecture.md: an ExternEntry with
extern_type_id 0x81 (P4EXEC_QUEUE), extern_id = port and a google.protobuf.Struct in
`entry`. It writes under its own role (`p4exec.queue`), so it does not take the
primary role away from the fabric controller.
"""

from __future__ import annotations

import argparse
import json
import queue
import sys

from p4exec.argtypes import PORT_MAX, U64, integer, real, tcp_or_unix_address

P4EXEC_QUEUE_EXTERN_TYPE = 0x81
MAX_DEPTH = 1 << 20
MAX_RATE = 10**13
ROLE = "p4exec.queue"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--grpc-server-addr", type=tcp_or_unix_address, default=None,
                   help="the switch's address (default: its default Unix socket for --device-id)")
    p.add_argument("--device-id", type=integer(0, U64), default=0)
    p.add_argument("port", type=integer(0, PORT_MAX), help="egress port (0 with no options: show all ports)")
    p.add_argument("--rate", type=integer(0, MAX_RATE), default=None, help="packets/s (0 = unlimited)")
    p.add_argument("--rate-bps", type=integer(0, MAX_RATE), default=None, help="bits/s (0 = unlimited)")
    p.add_argument("--depth", type=integer(0, MAX_DEPTH), default=None, help="packets")
    p.add_argument("--timeout", type=real(0.001, 3600), default=5.0)


def queue_entity(port: int, fields: dict):
    """The P4Runtime Entity that carries one port's queue settings."""
    from google.protobuf import struct_pb2
    from p4.v1 import p4runtime_pb2

    ent = p4runtime_pb2.Entity()
    ent.extern_entry.extern_type_id = P4EXEC_QUEUE_EXTERN_TYPE
    ent.extern_entry.extern_id = port
    if fields:
        st = struct_pb2.Struct()
        st.update(fields)
        ent.extern_entry.entry.Pack(st)
    return ent


def decode_entry(ent) -> dict:
    from google.protobuf import json_format, struct_pb2

    st = struct_pb2.Struct()
    ent.extern_entry.entry.Unpack(st)
    out = json_format.MessageToDict(st)
    out["port"] = ent.extern_entry.extern_id
    return out


def set_queue(addr: str, device_id: int, port: int, fields: dict, timeout: float = 5.0) -> None:
    """Arbitrate under our role, then MODIFY the port's queue extern entry."""
    import grpc
    from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

    with grpc.insecure_channel(addr) as channel:
        grpc.channel_ready_future(channel).result(timeout=timeout)
        stub = p4runtime_pb2_grpc.P4RuntimeStub(channel)
        outbox: queue.Queue = queue.Queue()
        req = p4runtime_pb2.StreamMessageRequest()
        req.arbitration.device_id = device_id
        req.arbitration.role.name = ROLE
        req.arbitration.election_id.low = 1
        outbox.put(req)

        def requests():
            while True:
                item = outbox.get()
                if item is None:
                    return
                yield item

        stream = stub.StreamChannel(requests())
        try:
            first = next(stream)
            if not first.HasField("arbitration"):
                raise RuntimeError(f"unexpected stream answer: {first}")
            wreq = p4runtime_pb2.WriteRequest(device_id=device_id, role=ROLE)
            wreq.election_id.low = 1
            upd = wreq.updates.add()
            upd.type = p4runtime_pb2.Update.MODIFY
            upd.entity.CopyFrom(queue_entity(port, fields))
            stub.Write(wreq, timeout=timeout)
        finally:
            outbox.put(None)
            stream.cancel()


def read_queues(addr: str, device_id: int, port: int = 0, timeout: float = 5.0) -> list[dict]:
    import grpc
    from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

    with grpc.insecure_channel(addr) as channel:
        stub = p4runtime_pb2_grpc.P4RuntimeStub(channel)
        rreq = p4runtime_pb2.ReadRequest(device_id=device_id)
        rreq.entities.add().CopyFrom(queue_entity(port, {}))
        out: list[dict] = []
        for resp in stub.Read(rreq, timeout=timeout):
            out.extend(decode_entry(e) for e in resp.entities if e.HasField("extern_entry"))
        return out


def run(args: argparse.Namespace) -> int:
    import grpc

    if args.grpc_server_addr is None:
        from p4exec.switch.grpc_link import default_address

        args.grpc_server_addr = default_address(args.device_id)
    fields = {}
    if args.rate is not None:
        fields["rate_pps"] = args.rate
    if args.rate_bps is not None:
        fields["rate_bps"] = args.rate_bps
    if args.depth is not None:
        fields["depth"] = args.depth
    try:
        if fields:
            set_queue(args.grpc_server_addr, args.device_id, args.port, fields, args.timeout)
        for q in read_queues(args.grpc_server_addr, args.device_id, args.port if fields else args.port, args.timeout):
            print(json.dumps(q, sort_keys=True))
    except grpc.RpcError as exc:
        print(f"p4exec queue: {exc.code().name}: {exc.details()}", file=sys.stderr)
        return 1
    except (grpc.FutureTimeoutError, RuntimeError) as exc:
        print(f"p4exec queue: cannot talk to {args.grpc_server_addr}: {exc or 'timeout'}", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="p4exec queue", description=__doc__.splitlines()[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
