"""Bounded memory for any client of a real `p4exec switch` process over gRPC (issue 34, points 1-3).

A program's declared state is checked against the switch's budget before anything is allocated; replacing a
pipeline frees the old state; failed updates of a batch leave nothing behind; every failure of a big batch
can be identified. RSS is read from /proc of the switch process itself.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from p4.v1 import p4runtime_pb2

from p4exec.compiler.program import compile_source
from tests.support.p4rt_client import Client

CFG = p4runtime_pb2.SetForwardingPipelineConfigRequest
U = p4runtime_pb2.Update

PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
struct headers { ethernet_t ethernet; }
struct metadata { }
parser P(packet_in pk, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.ethernet); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    register<bit<32>>(SIZE) big;
    action fwd(bit<9> port) { sm.egress_spec = port; }
    table t { key = { hdr.ethernet.dst: exact; } actions = { fwd; NoAction; } size = 1000000; }
    apply { t.apply(); big.write(0, 1); }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pk, in headers hdr) { apply { pk.emit(hdr.ethernet); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def program(size: str) -> tuple[bytes, object]:
    source = PROGRAM.replace("SIZE", size)
    return source.encode(), compile_source(source).p4info


class SwitchProcess:
    """`p4exec switch --no-p4` on a private Unix socket, with a client holding primary."""

    def __init__(self, tmp: Path, *extra: str) -> None:
        self.address = f"unix:{tmp}/sw.sock"
        cmd = [sys.executable, "-m", "p4exec.switch", "--no-p4", "--device-id", "1",
               "--grpc-server-addr", self.address, *extra]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        line = ""
        deadline = time.monotonic() + 60
        while "ready" not in line and time.monotonic() < deadline:
            line = self.proc.stderr.readline() if self.proc.stderr else ""
            if not line and self.proc.poll() is not None:
                break
        assert "ready" in line, line
        self.client = Client(self.address, device_id=1, election_id=1)
        self.client.connect()

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise AssertionError("no VmRSS")

    def close(self) -> None:
        self.client.close()
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def switch(tmp_path: Path) -> Iterator[SwitchProcess]:
    sw = SwitchProcess(tmp_path, "--state-budget-mb", "256")
    yield sw
    sw.close()


def test_declared_state_above_the_budget_is_refused_before_allocating(switch: SwitchProcess) -> None:
    """A 4 GiB register (1 << 29 cells) is refused at once, naming the object and its size; RSS unchanged."""
    before = switch.rss_mb()
    source, p4info = program("1 << 29")
    for action in (CFG.VERIFY, CFG.VERIFY_AND_COMMIT):
        with pytest.raises(grpc.RpcError) as ei:
            switch.client.set_pipeline(p4info, source, action=action)
        assert ei.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        msg = ei.value.details()
        assert "'I.big'" in msg and "536870912 cells" in msg and "4.0 GiB" in msg and "256.0 MiB" in msg, msg
    assert switch.rss_mb() < before + 50


@pytest.mark.slow  # a soak: RSS of a switch process over many rounds (make test runs it, test-fast does not)
def test_a_replaced_pipeline_frees_its_state(switch: SwitchProcess) -> None:
    """Three commits of a 128 MiB register (within the 256 MiB budget) leave RSS near one copy, not three: one
    copy kept is already above the margin."""
    source, p4info = program("1 << 24")
    switch.client.set_pipeline(p4info, source)
    first = switch.rss_mb()
    for _ in range(2):  # 256 MiB more if none were freed, 128 MiB if one was kept
        switch.client.set_pipeline(p4info, source)
    assert switch.rss_mb() < first + 100, (first, switch.rss_mb())


def test_budget_flag_is_checked(tmp_path: Path) -> None:
    for bad in ("0", "-5", "nan", "inf", "abc"):
        r = subprocess.run([sys.executable, "-m", "p4exec.switch", "--no-p4", "--state-budget-mb", bad],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode != 0 and "--state-budget-mb" in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_fabric_switches_get_the_fabric_budget() -> None:
    """ethlab starts every p4exec switch of a fabric with its own (smaller) budget."""
    from topologies import build
    from topologies.mininet_builder import Fabric, FabricOptions
    from topologies.switches import FABRIC_STATE_BUDGET_MB

    with Fabric(build("line", n=1), FabricOptions()) as f:
        cmd = f.switch("s1").command()
    assert cmd[cmd.index("--state-budget-mb") + 1] == str(FABRIC_STATE_BUDGET_MB)
    from p4exec.switch.cli import DEFAULT_STATE_BUDGET_MB
    assert FABRIC_STATE_BUDGET_MB < DEFAULT_STATE_BUDGET_MB


def _entries(p4info, n: int, kind: int) -> list:
    table = next(t for t in p4info.tables if t.preamble.name.endswith(".t"))
    fwd = next(a for a in p4info.actions if a.preamble.name.endswith(".fwd"))
    out = []
    for i in range(n):
        u = U(type=kind)
        e = u.entity.table_entry
        e.table_id = table.preamble.id
        m = e.match.add()
        m.field_id = 1
        m.exact.value = (i + 1).to_bytes(6, "big")
        e.action.action.action_id = fwd.preamble.id
        p = e.action.action.params.add()
        p.param_id = 1
        p.value = b"\x01"
        out.append(u)
    return out


def _write(client: Client, updates: list) -> grpc.RpcError | None:
    """Write in batches a default client can be told every failure of; the last error, if any."""
    last = None
    for start in range(0, len(updates), 300):
        try:
            client.write(*updates[start:start + 300])
        except grpc.RpcError as err:
            last = err
    return last


@pytest.mark.slow  # a soak: RSS of a switch process over many rounds (make test runs it, test-fast does not)
def test_failed_updates_leave_nothing_behind(switch: SwitchProcess) -> None:
    """Writes of thousands of duplicate inserts and absent deletes: the switch's RSS stays flat."""
    source, p4info = program("16")
    switch.client.set_pipeline(p4info, source)
    n = 1500
    inserts = _entries(p4info, n, U.INSERT)
    assert _write(switch.client, inserts) is None
    deletes = _entries(p4info, n, U.DELETE)
    for i in range(n):  # absent keys
        deletes[i].entity.table_entry.match[0].exact.value = (n + 1 + i).to_bytes(6, "big")
    for _ in range(2):  # warm up: caches, allocator arenas
        assert _write(switch.client, inserts) is not None
        assert _write(switch.client, deletes) is not None
    time.sleep(0.3)
    before = switch.rss_mb()
    for _ in range(5):  # 15,000 failed updates: ~200 MB if each kept its ~13 KB
        err = _write(switch.client, inserts)
        assert err is not None and err.code() == grpc.StatusCode.UNKNOWN
        assert _write(switch.client, deletes) is not None
    time.sleep(0.3)
    assert switch.rss_mb() < before + 30, (before, switch.rss_mb())


@pytest.mark.slow  # a soak: RSS of a switch process over many rounds (make test runs it, test-fast does not)
def test_inserted_then_deleted_entries_leave_nothing_behind(switch: SwitchProcess) -> None:
    """Six rounds of 3,000 inserts and deletes: flat RSS (an entry and its cached lookup result referred to
    each other; frozen by the packet loop, every deleted entry stayed: ~470 bytes each)."""
    source, p4info = program("16")
    switch.client.set_pipeline(p4info, source)
    inserts, deletes = _entries(p4info, 3000, U.INSERT), _entries(p4info, 3000, U.DELETE)
    for _ in range(2):
        assert _write(switch.client, inserts) is None and _write(switch.client, deletes) is None
    before = switch.rss_mb()
    for _ in range(6):  # 8.4 MB if every entry stayed
        assert _write(switch.client, inserts) is None and _write(switch.client, deletes) is None
    assert switch.rss_mb() < before + 4, (before, switch.rss_mb())


def test_control_plane_writes_make_no_reference_cycles(make_client) -> None:
    """What the switch's packet loop would freeze for good: cyclic garbage left by inserts, modifies, deletes and
    failed updates. In-process, with the collector saving what it finds."""
    import gc

    source, p4info = program("16")
    c = make_client(election_id=1)
    c.connect()
    c.set_pipeline(p4info, source)
    inserts, deletes = _entries(p4info, 200, U.INSERT), _entries(p4info, 200, U.DELETE)
    modifies = _entries(p4info, 200, U.MODIFY)

    def work() -> None:
        assert _write(c, inserts) is None
        assert _write(c, modifies) is None
        assert _write(c, inserts) is not None  # duplicates
        assert _write(c, deletes) is None
        assert _write(c, deletes) is not None  # absent

    work()  # warm-up: caches
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        work()
        gc.collect()
        # the client in this process makes its own (an RpcError's traceback): only the server's count
        ours = [o for o in gc.garbage if _server_side(o)]
        assert not ours, sorted({type(o).__name__ for o in ours})
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


def _server_side(obj: object) -> bool:
    """An object of p4exec's, or a frame running p4exec code."""
    import types

    kind = type(obj)  # not isinstance: a dead weak proxy raises on any use
    if kind is types.FrameType:
        return "/p4exec/" in obj.f_code.co_filename  # type: ignore[attr-defined]
    return kind.__module__.startswith("p4exec")
