"""Independent-partition parallel DES (vfabric/partition.py): a multi-plane all-to-all with flows pinned to
their planes is simulated by one process per group of planes, and the merged metrics.json, flows.csv and
links.csv are byte-identical to the single-process run; a run with coupling (a fault) stays in one process
and says why."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from ethlab.experiment.spec import parse_spec
from ethlab.experiment.trial import TrialSetup
from ethlab.experiment.virtual_trial import VirtualOptionError, check_options, run_virtual_trial

FILES = ("metrics.json", "flows.csv", "links.csv")


def _spec(**extra) -> dict:
    spec = {"name": "vt-partitions", "topology": {"name": "erack", "params": {"gpus": 4, "planes": 3, "radix": 8}},
            "clock": "virtual", "seed": 2, "virtual": {"time_limit_s": 0.01, "queue_depth": 8},
            "traffic": {"pattern": "all_to_all", "size": "96KiB", "params": {"planes": 3}},
            "policies": [{"name": "ecmp"}]}
    spec.update(extra)
    return spec


def _run(raw: dict, workers: int, out: Path) -> tuple[dict[str, bytes], dict]:
    import json

    raw = dict(raw, virtual=dict(raw["virtual"], workers=workers))
    spec = parse_spec(raw)
    variant = spec.variants[0]
    topo = spec.build_topology()
    setup = TrialSetup(topo, variant.make_policy(), spec.plan(topo), spec.engine_config(variant),
                       queue_depth=None, seed=spec.seed, faults=list(spec.faults))
    run_virtual_trial(setup, out, options=spec.virtual)
    switch = json.loads((out / "switch.json").read_text())
    return {name: (out / name).read_bytes() for name in FILES}, switch["virtual"]


def test_split_run_is_byte_identical(tmp_path: Path) -> None:
    one, v1 = _run(_spec(), 1, tmp_path / "one")
    three, v3 = _run(_spec(), 3, tmp_path / "three")
    two, v2 = _run(_spec(), 2, tmp_path / "two")
    assert v1["simulated_by"].startswith("one process")
    assert v3["simulated_by"] == "3 processes (independent partitions)"
    assert v2["simulated_by"] == "2 processes (independent partitions)"
    assert v1["pipeline_packets"] == v2["pipeline_packets"] == v3["pipeline_packets"] > 0
    for name in FILES:
        assert one[name] == three[name], f"{name}: 3 processes differ from one"
        assert one[name] == two[name], f"{name}: 2 processes differ from one"
    # a real workload: 12 flows per plane, queues built up (the 8-packet queues drop at the incast)
    assert one["flows.csv"].count(b"\n") == 4 * 3 + 1
    assert b'"clock": "virtual"' in one["metrics.json"]


def test_split_run_with_a_congestion_reaction_is_byte_identical(tmp_path: Path) -> None:
    raw = _spec(engine={"reaction": "dcqcn"}, fabric={"queue_depth": 8})
    one, _v1 = _run(raw, 1, tmp_path / "one")
    two, v2 = _run(raw, 2, tmp_path / "two")
    assert v2["simulated_by"].startswith("2 processes")
    for name in FILES:
        assert one[name] == two[name], name


@pytest.mark.parametrize("transport", ["sr", "rc-gbn"])
def test_split_run_with_a_reliable_transport_is_byte_identical(tmp_path: Path, transport: str) -> None:
    """Drops at the 8-packet incast queues are retransmitted: every flow completes, and the transports'
    retransmissions, timeouts and NAKs come back from the workers with the records."""
    raw = _spec(engine={"transport": transport, "transport_params": {  # µs-scale timers for 400 Gbit/s
        "rto_s": 20e-6, "rto_init_s": 20e-6, "ack_delay_s": 1e-6, "reorder_s": 4e-6}})
    one, v1 = _run(raw, 1, tmp_path / "one")
    two, v2 = _run(raw, 2, tmp_path / "two")
    assert v1["simulated_by"] == "one process (one worker asked for)"
    assert v2["simulated_by"] == "2 processes (independent partitions)"
    for name in FILES:
        assert one[name] == two[name], name
    import csv
    import io

    rows = list(csv.DictReader(io.StringIO(one["flows.csv"].decode())))
    assert rows and all(r["complete"] == "True" for r in rows)
    assert sum(int(r["retransmitted"]) for r in rows) > 0


def test_split_reliable_run_past_the_packet_bound_reports_it(tmp_path: Path) -> None:
    """The plan's 204 frames fit max_packets, but retransmissions and ACKs go past it: one process stops
    sending at the bound; split, each process counts its own, and the merged count says the bound was hit."""
    import json

    raw = _spec(engine={"transport": "sr", "max_packets": 210, "transport_params": {
        "rto_s": 20e-6, "rto_init_s": 20e-6, "ack_delay_s": 1e-6, "reorder_s": 4e-6}})
    _run(raw, 1, tmp_path / "one")
    _files, v2 = _run(raw, 2, tmp_path / "two")
    assert v2["simulated_by"].startswith("2 processes")
    for out in ("one", "two"):
        assert json.loads((tmp_path / out / "metrics.json").read_text())["summary"]["packet_limit_hit"], out


def test_split_run_hitting_the_time_limit_is_byte_identical(tmp_path: Path) -> None:
    raw = _spec(virtual={"time_limit_s": 3e-6, "queue_depth": 8})
    one, v1 = _run(raw, 1, tmp_path / "one")
    two, v2 = _run(raw, 2, tmp_path / "two")
    assert v1["stopped_by"] == v2["stopped_by"] == "virtual_time_limit"
    assert v2["simulated_by"].startswith("2 processes")
    for name in FILES:
        assert one[name] == two[name], name


def test_coupled_run_stays_in_one_process(tmp_path: Path) -> None:
    raw = _spec(faults=[{"at_s": 1e-6, "action": "link_down", "a": "gpu0", "b": "p0", "for_s": 2e-6}])
    _files, v = _run(raw, 2, tmp_path / "fault")
    assert v["simulated_by"] == "one process (faults: the controller's reaction reaches every switch)"


def test_workers_option_is_checked() -> None:
    with pytest.raises(VirtualOptionError, match="virtual.workers"):
        check_options({"workers": 0})


# ------------------------------------------------------------------------------------------ failing workers
# Each patch below is made in the parent and inherited by the forked worker, which alone reaches it.

def _patched_worker(monkeypatch: pytest.MonkeyPatch, name: str, in_worker: Callable[..., object]) -> None:
    """vfabric.partition's `name` calls `in_worker` with its arguments first, in a forked worker only (the
    parent runs the original alone), then the original."""
    import os

    from vfabric import partition

    parent, original = os.getpid(), getattr(partition, name)

    def patched(*args: object) -> object:
        if os.getpid() != parent:
            in_worker(*args)
        return original(*args)

    monkeypatch.setattr(partition, name, patched)


@pytest.mark.timeout(120)
def test_a_worker_that_dies_before_sending_is_named_not_waited_for(tmp_path: Path, monkeypatch) -> None:
    import os

    from vfabric import partition

    _patched_worker(monkeypatch, "collect_group", lambda run, group: os._exit(3))
    with pytest.raises(partition.WorkerError,
                       match=r"partition worker 1 \(pid \d+\) ended without sending its results \(exit status 3"):
        _run(_spec(), 2, tmp_path / "two")


@pytest.mark.timeout(120)
def test_a_worker_killed_before_its_ending_is_named(tmp_path: Path, monkeypatch) -> None:
    import os
    import signal

    from vfabric import partition

    def killed(fd: int, obj: object) -> None:
        if obj != partition.HELLO:
            os.kill(os.getpid(), signal.SIGKILL)

    _patched_worker(monkeypatch, "send", killed)
    with pytest.raises(partition.WorkerError, match=r"worker 1 .* without sending its ending \(killed by SIGKILL"):
        _run(_spec(), 2, tmp_path / "two")


@pytest.mark.timeout(120)
def test_a_worker_stuck_before_it_starts_is_stopped_and_named(tmp_path: Path, monkeypatch) -> None:
    """What CI once saw (a worker stuck inside gRPC's after-fork handler): bounded, then stopped."""
    import time

    from vfabric import partition

    _patched_worker(monkeypatch, "send", lambda fd, obj: time.sleep(600))
    monkeypatch.setattr(partition, "START_TIMEOUT_S", 1.0)
    t0 = time.monotonic()
    # how the stop ends depends on the SIGTERM handler the worker inherited: none (killed by SIGTERM), or the
    # CLI's, which an earlier in-process test in this pytest worker installed (KeyboardInterrupt: exit status 1)
    with pytest.raises(partition.WorkerError,
                       match=r"worker 1 \(pid \d+\) sent no start in time \(stuck; stopped: "
                             r"(killed by SIGTERM|exit status 1)\)"):
        _run(_spec(), 3, tmp_path / "three")
    assert time.monotonic() - t0 < 60


_FORK_BESIDE_GRPC = r"""
import os, sys, threading, time
import vfabric.run  # the project first, as the CLI does: gRPC's fork handlers off before grpc is imported
import grpc
from concurrent import futures
assert os.environ["GRPC_ENABLE_FORK_SUPPORT"] == "false"

def echo(requests, _context):
    yield from requests

server = grpc.server(futures.ThreadPoolExecutor(4))
server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
    "t.Echo", {"Stream": grpc.stream_stream_rpc_method_handler(echo)}),))
port = server.add_insecure_port("127.0.0.1:0")
server.start()
channel = grpc.insecure_channel(f"127.0.0.1:{port}")
stop = time.monotonic() + 60
def requests():
    while time.monotonic() < stop:
        yield b"x"
        time.sleep(0.0005)
replies = channel.stream_stream("/t.Echo/Stream")(requests())
flowing = threading.Event()
def drain():
    for _ in replies:
        flowing.set()
threading.Thread(target=drain, daemon=True).start()
assert flowing.wait(30), "the stream never answered"
for _ in range(int(sys.argv[1])):  # fork while the server and the client stream are busy
    pid = os.fork()
    if pid == 0:
        os._exit(7)
    deadline = time.monotonic() + 10
    while not os.waitpid(pid, os.WNOHANG)[0]:
        if time.monotonic() > deadline:
            print("child stuck after fork", flush=True)
            os._exit(1)
        time.sleep(0.002)
print("forks ok", flush=True)
os._exit(0)
"""


@pytest.mark.timeout(180)
def test_forks_beside_a_live_in_process_grpc_server_do_not_hang() -> None:
    """As a split run forks beside the controller's and the in-process servers' threads: with gRPC's fork
    handlers off (p4exec/__init__.py) every child ends at once; with them on, one worker once hung in CI."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "GRPC_ENABLE_FORK_SUPPORT"}
    out = subprocess.run([sys.executable, "-c", _FORK_BESIDE_GRPC, "40"], capture_output=True, text=True,
                         timeout=150, env=env, cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 0 and "forks ok" in out.stdout, out.stdout + out.stderr


@pytest.mark.parametrize(("transport", "kept"), [("sr", "1"), ("none", "0")])
def test_results_made_ahead_by_a_worker_are_identical(tmp_path: Path, monkeypatch, transport: str,
                                                      kept: str) -> None:
    """A worker whose phase 1 ends first makes its results while the parent still runs; it sends them only
    if nothing but completion checks ran after (else it makes them again). Forced here for every worker:
    under sr the worker's phase 2 has only a cancelled timer due (results kept), under transport none a
    loss-grace timer (results made again)."""
    from vfabric import partition
    from vfabric import run as vrun

    answers = tmp_path / "answers"
    only_checks = vrun._only_checks_due

    def noted(sim, check, by_ns: int) -> bool:
        answer = only_checks(sim, check, by_ns)
        with answers.open("a") as fh:
            fh.write(f"{int(answer)}")
        return answer

    raw = _spec(engine={"transport": transport, "transport_params": {
        "rto_s": 20e-6, "rto_init_s": 20e-6, "ack_delay_s": 1e-6, "reorder_s": 4e-6}})
    one, _v1 = _run(raw, 1, tmp_path / "one")
    monkeypatch.setattr(partition, "readable", lambda fd: False)  # the parent's orders never already there
    monkeypatch.setattr(vrun, "_only_checks_due", noted)
    three, v3 = _run(raw, 3, tmp_path / "three")
    assert v3["simulated_by"] == "3 processes (independent partitions)"
    for name in FILES:
        assert one[name] == three[name], name
    assert answers.read_text() == kept  # one worker's phase 2 ran (the others ended last)


def test_only_completion_checks_due() -> None:
    from vfabric.events import Simulator
    from vfabric.run import _only_checks_due

    sim = Simulator()

    def check() -> None:
        pass

    def other() -> None:
        pass

    sim.at(100, check)
    sim.at(300, other)
    assert _only_checks_due(sim, check, 299)
    assert not _only_checks_due(sim, check, 300)
    sim.at(50, other)
    assert not _only_checks_due(sim, check, 60)


def test_an_order_to_a_worker_that_has_ended_is_not_an_error() -> None:
    """A worker can end while making its results early, before the parent's order: sending the order must not
    raise (BrokenPipeError), so that the parent's next receive names the worker and how it ended."""
    import os

    from vfabric import partition

    r, w = os.pipe()
    os.close(r)  # the worker's end of its orders pipe is gone
    try:
        worker = partition.Worker(1, os.getpid(), -1, w)
        worker.order(("done", 5))
        with pytest.raises(BrokenPipeError):
            partition.send(w, ("done", 5))
    finally:
        os.close(w)
