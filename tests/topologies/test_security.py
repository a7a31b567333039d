"""Issue 15, items 1 and 2 as a second local user would try them: fabric switches are reachable only by root
(Unix sockets in a root-only directory, no TCP listener), and run directories cannot be pre-created, entered,
or used to redirect ethlab's writes through symlinks."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import grpc
import pytest
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from p4exec.privdir import UnsafeDirectory, ensure_private_dir, open_new
from topologies import build
from topologies.mininet_builder import Fabric, FabricOptions
from topologies.run_records import RunState
from topologies.rundirs import new_run_dir
from topologies.switches import P4ExecSwitch

NOBODY = (65534, 65534)
SYSTEM_PYTHON = "/usr/bin/python3"  # readable by every user (the venv's interpreter may not be)


def as_nobody(code: str) -> subprocess.CompletedProcess[str]:
    """Run Python `code` as the unprivileged user nobody (the attacker of these tests)."""
    return subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", SYSTEM_PYTHON, "-c",
                           code], capture_output=True, text=True, timeout=30, cwd="/")


def tcp_listeners(pid: int) -> list[str]:
    out = subprocess.run(["ss", "-Hltnp"], capture_output=True, text=True).stdout
    return [ln for ln in out.splitlines() if f"pid={pid}," in ln]


@pytest.mark.netns
def test_fabric_switch_is_reachable_only_by_root() -> None:
    with Fabric(build("line", n=1), FabricOptions(switch_cls=P4ExecSwitch)) as f:
        f.start()
        sw = f.switch("s1")
        assert sw.grpc_addr.startswith("unix:")
        path = sw.grpc_addr.removeprefix("unix:")
        # root (the controller) gets an answer over the socket
        with grpc.insecure_channel(sw.grpc_addr) as ch:
            caps = p4runtime_pb2_grpc.P4RuntimeStub(ch).Capabilities(p4runtime_pb2.CapabilitiesRequest(), timeout=10)
            assert caps.p4runtime_api_version
        # nobody cannot open it, and there is no TCP port to try instead
        r = as_nobody(f"import socket; s = socket.socket(socket.AF_UNIX); s.connect({path!r}); print('connected')")
        assert "connected" not in r.stdout and "PermissionError" in r.stderr, (r.stdout, r.stderr)
        assert tcp_listeners(sw.proc.pid) == []
        for d in (Path(path).parent, Path(f.run.log_dir)):
            st = os.stat(d)
            assert st.st_uid == 0 and stat.S_IMODE(st.st_mode) == 0o700


@pytest.mark.netns
def test_socket_directory_outside_a_long_run_directory_goes_at_stop(tmp_path) -> None:
    """A run directory too deep for Unix socket names puts the sockets in a fresh temporary directory; the
    run directory stays (its logs are results), that one does not."""
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    with Fabric(build("line", n=1), FabricOptions(switch_cls=P4ExecSwitch, log_dir=str(deep))) as f:
        f.start()
        sockets = f.socket_dir
        assert sockets is not None and deep not in sockets.parents and sockets.is_dir()
    assert not sockets.exists() and deep.is_dir()


def test_run_directories_are_fresh_private_and_unpredictable(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ETHLAB_RUNS_DIR", str(tmp_path / "runs"))
    a, b = new_run_dir("abc"), new_run_dir("abc")  # the same run id twice: two different new directories
    assert a != b and a.parent == b.parent == tmp_path / "runs"
    for d in (a, b, a.parent):
        st = os.lstat(d)
        assert stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) == 0o700


def test_a_parent_pre_created_by_another_user_is_not_used(tmp_path, monkeypatch) -> None:
    trap = tmp_path / "runs"
    trap.mkdir(mode=0o777)
    os.chmod(trap, 0o777)
    os.chown(trap, *NOBODY)
    monkeypatch.setenv("ETHLAB_RUNS_DIR", str(trap))
    d = new_run_dir("xyz")
    assert trap not in d.parents and os.lstat(d).st_uid == os.geteuid()
    assert stat.S_IMODE(os.lstat(d).st_mode) == 0o700
    d.rmdir()


def test_attacker_directories_and_symlinks_are_refused(tmp_path) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chown(theirs, *NOBODY)
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    os.chmod(open_dir, 0o777)
    link = tmp_path / "link"
    link.symlink_to(tmp_path)
    for bad in (theirs, open_dir, link):
        with pytest.raises(UnsafeDirectory):
            ensure_private_dir(bad)
    victim = tmp_path / "root-only"
    victim.write_text("precious\n")
    planted = tmp_path / "planted.out"
    planted.symlink_to(victim)
    with pytest.raises(OSError):
        open_new(planted)
    assert victim.read_text() == "precious\n"


@pytest.mark.netns
def test_fabric_refuses_a_log_dir_another_user_controls(tmp_path) -> None:
    trap = tmp_path / "logs"
    trap.mkdir()
    os.chmod(trap, 0o777)
    os.chown(trap, *NOBODY)
    f = Fabric(build("line", n=1), FabricOptions(log_dir=str(trap)))
    with pytest.raises(UnsafeDirectory):
        with f:
            pass
    assert list(trap.iterdir()) == []  # nothing written into it


def test_switch_output_is_never_written_through_a_planted_symlink(tmp_path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir(mode=0o700)
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (run_dir / "s1.out").symlink_to(victim)

    class Probe(P4ExecSwitch):  # only the file handling of start(); no process is started
        def __init__(self) -> None:
            self.name, self.log_dir, self.json_path, self.run = "s1", run_dir, None, None

        def command(self) -> list[str]:
            return ["true"]

    with pytest.raises(OSError):
        Probe().start()
    assert victim.read_text() == "precious\n"


def test_state_files_go_through_a_fresh_name_in_a_private_directory(tmp_path, monkeypatch) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    monkeypatch.setenv("ETHLAB_STATE_DIR", str(state))
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (state / "abc.tmp").symlink_to(victim)  # the old fixed temporary name
    RunState("abc").save()
    assert victim.read_text() == "precious\n"
    assert RunState.load("abc").run_id == "abc"
    os.chmod(state, 0o777)
    with pytest.raises(UnsafeDirectory):
        RunState("abd").save()


def test_runs_in_a_state_directory_others_can_write_are_ignored(tmp_path, monkeypatch) -> None:
    from topologies.run_records import all_runs

    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    monkeypatch.setenv("ETHLAB_STATE_DIR", str(state))
    RunState("abc").save()
    assert [r.run_id for r in all_runs()] == ["abc"]
    os.chmod(state, 0o777)
    assert all_runs() == []


def test_unix_socket_helper_accepts_grpc_forms() -> None:
    from p4exec.p4runtime.server import unix_path

    assert unix_path("unix:/run/x/s.sock") == "/run/x/s.sock" == unix_path("unix:///run/x/s.sock")
    assert unix_path("127.0.0.1:9559") is None
