"""Run state files and the narrow process cleanup (pid + start time), without touching the network."""

from __future__ import annotations

import subprocess

from topologies.cleanup import clean, kill_recorded
from topologies.run_records import RunState, all_runs, new_run_id, proc_start_time


def test_state_round_trip_and_run_ids(tmp_path, monkeypatch):
    monkeypatch.setenv("ETHLAB_STATE_DIR", str(tmp_path))
    run = RunState(new_run_id(), topology="line", label="up")
    run.add_netns(f"{run.prefix}-h1")
    run.add_interfaces([f"{run.prefix}s1-1"])
    back = RunState.load(run.run_id)
    assert back == run and back.path == tmp_path / f"{run.run_id}.json"
    assert len(run.run_id) == 3 and run.prefix == f"el{run.run_id}"
    assert all(new_run_id() != run.run_id for _ in range(200))
    assert 0x454C0000 <= run.default_link_group() <= 0x454CFFFF


def test_clean_by_label_only_touches_that_kind(tmp_path, monkeypatch):
    monkeypatch.setenv("ETHLAB_STATE_DIR", str(tmp_path))
    a = RunState("aaa", label="up")
    b = RunState("bbb", label="test")
    a.save()
    b.save()
    reports = clean(include_live=True, label="up")
    assert [r.run_id for r in reports] == ["aaa"]
    assert [r.run_id for r in all_runs()] == ["bbb"]
    other = RunState("ccc", owner_pid=1)  # owner still running: kept unless asked for
    other.save()
    assert [r.run_id for r in clean()] == ["bbb"]  # b's owner is this process, which is not "another live owner"
    assert [r.run_id for r in all_runs()] == ["ccc"]
    assert [r.run_id for r in clean(["ccc"])] == ["ccc"] and all_runs() == []


def test_a_reused_pid_is_never_signalled():
    proc = subprocess.Popen(["sleep", "30"])
    try:
        start = proc_start_time(proc.pid)
        assert start > 0
        assert kill_recorded({"stranger": [proc.pid, start + 1]}) == []  # same pid, other start time
        assert proc.poll() is None
        assert kill_recorded({"ours": [proc.pid, start]}) == ["ours"]
        assert proc.wait(5) != 0
    finally:
        proc.kill()
        proc.wait()
