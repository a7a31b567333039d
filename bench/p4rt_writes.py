"""Batched P4Runtime write throughput into one switch: Writes of 1000 LPM entries into a 64k-entry table.

    .venv/bin/python bench/p4rt_writes.py [--entries 64000] [--batch 1000]

First, in this process, the P4Runtime service without gRPC: the same requests through the general
path (protobuf objects, translate.py) and through the fast path (wire.py + fastpath.py), side by side.
Then it starts a `p4exec switch` (no ports) and, when `simple_switch_grpc` and `p4c-bm2-ss` are on PATH, a BMv2
switch with the same program; pushes bench/lpm64k.p4 and times the Writes. Requests are built and
serialized before the clock starts (the pure-Python protobuf runtime takes ~0.1 ms per entry to serialize,
more than the switch needs to apply it), so only the switch's work and the gRPC transfer are timed. Prints
entries/s per target (wall clock) and entries per CPU second of the switch process (what a loaded, shared
host distorts least), the ratios p4exec / BMv2 when both ran, and p4exec against the 20,000 entries/s goal.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import grpc  # noqa: E402
from p4.v1 import p4runtime_pb2 as pb  # noqa: E402
from p4.v1 import p4runtime_pb2_grpc  # noqa: E402

from p4exec.switch.lab import SwitchProcess  # noqa: E402
from p4exec.v1model.loader import load_config  # noqa: E402

PROGRAM = ROOT / "bench" / "lpm64k.p4"
GOAL = 20_000.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def requests(p4info, n: int, batch: int) -> list[pb.WriteRequest]:
    table = next(t for t in p4info.tables if t.preamble.name == "MyIngress.routes")
    action = next(a for a in p4info.actions if a.preamble.name == "MyIngress.set_nhop")
    out = []
    for start in range(0, n, batch):
        req = pb.WriteRequest(device_id=1)
        req.election_id.low = 1
        for i in range(start, min(n, start + batch)):
            e = req.updates.add(type=pb.Update.INSERT).entity.table_entry
            e.table_id = table.preamble.id
            m = e.match.add(field_id=1)
            m.lpm.value = (0x0A000000 | (i << 8)).to_bytes(4, "big")  # 10.x.y.0/24, all distinct
            m.lpm.prefix_len = 24
            a = e.action.action
            a.action_id = action.preamble.id
            a.params.add(param_id=1, value=(0x020000000000 | i).to_bytes(6, "big"))
            a.params.add(param_id=2, value=(1 + i % 8).to_bytes(2, "big"))
        out.append(req)
    return out


def arbitrate(stub) -> tuple[Any, Any]:
    """Become primary (election id 1); the stream must stay open while writing."""
    import queue

    outq: queue.Queue = queue.Queue()
    msg = pb.StreamMessageRequest()
    msg.arbitration.device_id = 1
    msg.arbitration.election_id.low = 1
    outq.put(msg)

    def it():
        while True:
            m = outq.get()
            if m is None:
                return
            yield m

    stream = stub.StreamChannel(it())
    next(stream)
    return stream, outq


@dataclass
class Rate:
    wall: float  # entries per second of wall clock
    cpu: float  # entries per CPU second (user + system) of the switch process


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process and its threads, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_target(name: str, addr: str, pid: int, p4info, device_config: bytes,
               reqs: list[pb.WriteRequest]) -> Rate:
    channel = grpc.insecure_channel(addr, options=[("grpc.max_send_message_length", 64 << 20)])
    stub = p4runtime_pb2_grpc.P4RuntimeStub(channel)
    grpc.channel_ready_future(channel).result(timeout=60)
    stream, outq = arbitrate(stub)
    try:
        cfg = pb.SetForwardingPipelineConfigRequest(device_id=1, action=pb.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)
        cfg.election_id.low = 1
        cfg.config.p4info.CopyFrom(p4info)
        cfg.config.p4_device_config = device_config
        stub.SetForwardingPipelineConfig(cfg, timeout=120)
        n = sum(len(r.updates) for r in reqs)
        raws = [r.SerializeToString() for r in reqs]
        write = channel.unary_unary("/p4.v1.P4Runtime/Write", request_serializer=None,
                                    response_deserializer=pb.WriteResponse.FromString)
        c0, t0 = cpu_seconds(pid), time.perf_counter()
        for raw in raws:
            write(raw, timeout=300)
        dt, cpu = time.perf_counter() - t0, cpu_seconds(pid) - c0
        print(f"{name:8s} {n} entries in {len(reqs)} Writes: {dt:.2f} s, {n / dt:,.0f} entries/s; "
              f"switch CPU {cpu:.2f} s, {n / max(cpu, 1e-3):,.0f} entries per CPU second")
        return Rate(n / dt, n / max(cpu, 1e-3))
    finally:
        outq.put(None)
        stream.cancel()
        channel.close()


class _Context:
    """Enough of a gRPC ServicerContext for the service called directly."""

    def abort(self, code, message):
        raise RuntimeError(f"{code}: {message}")

    def invocation_metadata(self):
        # as the controller says it (controller/client.py): it takes every failure of a large batch
        from p4exec.p4runtime.errors import BUDGET_KEY, MAX_DETAILS_BUDGET

        return ((BUDGET_KEY, str(MAX_DETAILS_BUDGET)),)

    def set_trailing_metadata(self, md):
        pass


def in_process(p4info, reqs: list[pb.WriteRequest]) -> dict[str, float]:
    from p4exec.p4runtime.service import P4RuntimeService
    from p4exec.switch.inprocess import InProcessDevice

    raws = [r.SerializeToString() for r in reqs]
    n = sum(len(r.updates) for r in reqs)
    rates = {}
    for name in ("general", "fast"):
        dev = InProcessDevice(device_id=1)
        svc = P4RuntimeService(dev)
        svc._commit(dev.load_config(p4info, PROGRAM.read_bytes()), 0)
        svc.arbitrator.check_primary = lambda *a: None  # type: ignore[method-assign]  # no stream here
        t0 = time.perf_counter()
        for raw in raws:
            if name == "general":
                svc.Write(pb.WriteRequest.FromString(raw), _Context())
            else:
                svc.WriteRaw(raw, _Context())
        rates[name] = n / (time.perf_counter() - t0)
        print(f"in-process {name:8s} path: {rates[name]:,.0f} entries/s (decode included)")
    print(f"fast / general: {rates['fast'] / rates['general']:.1f}")
    return rates


def controller_encode(p4info, n: int) -> None:
    """The controller's side: us per update to build and serialize a table entry, through the protobuf
    classes (`table_entry` + `SerializeToString`) and through the per-table encoder (`entry_update`)."""
    from controller.client import SwitchConnection

    conn = SwitchConnection("127.0.0.1:1", p4info=p4info, name="bench")

    def entry(i: int) -> tuple:
        return ("MyIngress.routes", {"hdr.ipv4.dstAddr": (0x0A000000 | (i << 8), 24)}, "MyIngress.set_nhop",
                {"dmac": 0x020000000000 | i, "port": 1 + i % 8})

    def protobuf(i: int) -> bytes:
        update = pb.Update(type=pb.Update.INSERT)
        table, match, action, params = entry(i)
        conn.table_entry(table, match, action, params, into=update.entity.table_entry)
        return update.SerializeToString()

    def encoder(i: int) -> bytes:
        return conn.entry_update(pb.Update.INSERT, *entry(i)).raw

    assert protobuf(7) == encoder(7), "the encoder must give the protobuf runtime's bytes"
    cost = {}
    for name, fn in (("protobuf", protobuf), ("encoder", encoder)):
        c0 = time.process_time()
        for i in range(n):
            fn(i)
        cost[name] = (time.process_time() - c0) / n * 1e6
        print(f"controller {name:8s}: {cost[name]:6.1f} us CPU per update (build + serialize)")
    print(f"controller protobuf / encoder: {cost['protobuf'] / cost['encoder']:.1f}")


def p4exec_rate(p4info, reqs) -> Rate:
    addr = f"127.0.0.1:{free_port()}"
    proc = SwitchProcess([sys.executable, "-m", "p4exec.switch", "--no-p4", "--device-id", "1",
                          "--grpc-server-addr", addr, "--grpc-allow-local-users", "--log-console", "-L", "warn"])
    try:
        proc.wait_ready(60)
        return run_target("p4exec", addr, proc.pid, p4info, PROGRAM.read_bytes(), reqs)
    finally:
        proc.close()


def bmv2_rate(reqs) -> Rate | None:
    if not (shutil.which("simple_switch_grpc") and shutil.which("p4c-bm2-ss")):
        print("bmv2     not measured: simple_switch_grpc / p4c-bm2-ss not on PATH")
        return None
    from google.protobuf import text_format
    from p4.config.v1 import p4info_pb2

    with tempfile.TemporaryDirectory() as tmp:
        out, info = Path(tmp) / "prog.json", Path(tmp) / "p4info.txt"
        subprocess.run(["p4c-bm2-ss", "--p4runtime-files", str(info), "-o", str(out), str(PROGRAM)], check=True)
        p4info = text_format.Parse(info.read_text(), p4info_pb2.P4Info())
        port = free_port()
        proc = subprocess.Popen(["simple_switch_grpc", "--no-p4", "--device-id", "1", "--",
                                 "--grpc-server-addr", f"127.0.0.1:{port}"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            breqs = requests(p4info, sum(len(r.updates) for r in reqs), len(reqs[0].updates))
            return run_target("bmv2", f"127.0.0.1:{port}", proc.pid, p4info, out.read_bytes(), breqs)
        finally:
            proc.terminate()
            proc.wait(10)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=64_000)
    ap.add_argument("--batch", type=int, default=1000)
    args = ap.parse_args()
    p4info = load_config(PROGRAM.read_bytes()).p4info
    controller_encode(p4info, min(args.entries, 10_000))
    reqs = requests(p4info, args.entries, args.batch)
    in_process(p4info, reqs[:max(1, len(reqs) // 4)])
    mine = p4exec_rate(p4info, reqs)
    theirs = bmv2_rate(reqs)
    print(f"p4exec / goal {GOAL:,.0f}/s: {mine.wall / GOAL:.2f} (wall clock), "
          f"{mine.cpu / GOAL:.2f} (per switch CPU second)")
    if theirs:
        print(f"p4exec / bmv2: {mine.wall / theirs.wall:.2f} (wall clock), "
              f"{mine.cpu / theirs.cpu:.2f} (per switch CPU second)")


if __name__ == "__main__":
    main()
