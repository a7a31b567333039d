"""simple_switch_grpc's command line has one owner (topologies/bmv2_launch.py); these checks need no BMv2."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

from topologies.bmv2_launch import (
    PRIORITY_QUEUES,
    Bmv2Command,
    Bmv2Process,
    Bmv2StartError,
    accepts_priority_queues,
    free_ports,
)

# what simple_switch_grpc --help lists among its target options, from 1.15.1 on and in 1.15.0
_HELP_CURRENT = "Target options:\n  --grpc-server-addr arg\n  --priority-queues arg\n  --cpu-port arg\n"
_HELP_1_15_0 = "Target options:\n  --grpc-server-addr arg\n  --cpu-port arg\n"


def _fake_switch(tmp_path: Path, name: str, help_text: str) -> str:
    """An executable that answers --help as a BMv2 build would (and does nothing else)."""
    script = tmp_path / name
    script.write_text(f"#!/bin/sh\ncat <<'EOF'\n{help_text}EOF\n")
    script.chmod(0o755)
    return str(script)


def test_interfaces_and_target_options_are_placed_around_the_separator(tmp_path: Path) -> None:
    exe = _fake_switch(tmp_path, "simple_switch_grpc", _HELP_CURRENT)
    cmd = Bmv2Command(grpc_addr="127.0.0.1:5000", thrift_port=5001, device_id=3, interfaces={2: "b", 1: "a"},
                      log_level="warn", executable=exe).argv()
    assert cmd[:6] == [exe, "--no-p4", "-i", "1@a", "-i", "2@b"]
    assert cmd[cmd.index("--device-id") + 1] == "3" and cmd[cmd.index("--thrift-port") + 1] == "5001"
    assert cmd.index("--log-console") < cmd.index("--")
    assert cmd[cmd.index("--"):] == ["--", "--grpc-server-addr", "127.0.0.1:5000", "--priority-queues",
                                     str(PRIORITY_QUEUES), "--cpu-port", "255"]


def test_a_build_without_the_priority_queues_option_is_started_without_it(tmp_path: Path) -> None:
    """BMv2 1.15.0 compiles its queue count in and exits on --priority-queues; a build that lists the option,
    or that cannot be asked, gets it."""
    old = _fake_switch(tmp_path, "ss_1_15_0", _HELP_1_15_0)
    assert accepts_priority_queues(old) is False
    cmd = Bmv2Command(grpc_addr="127.0.0.1:5000", thrift_port=5001, executable=old).argv()
    assert "--priority-queues" not in cmd
    assert cmd[cmd.index("--"):] == ["--", "--grpc-server-addr", "127.0.0.1:5000", "--cpu-port", "255"]
    assert accepts_priority_queues(_fake_switch(tmp_path, "ss_current", _HELP_CURRENT)) is True
    assert accepts_priority_queues(str(tmp_path / "not_installed")) is True


def test_packet_channel_form_has_no_interfaces_and_no_cpu_port(tmp_path: Path) -> None:
    command = Bmv2Command(grpc_addr="127.0.0.1:5000", thrift_port=5001, json_path="/x/p.json", cpu_port=None,
                          packet_in="ipc:///d/packets.ipc", notifications_addr="ipc:///d/n.ipc", priority_queues=2,
                          executable=_fake_switch(tmp_path, "simple_switch_grpc", _HELP_CURRENT))
    cmd = command.argv()
    assert cmd[1] == "/x/p.json" and "-i" not in cmd and "--cpu-port" not in cmd and "--log-console" not in cmd
    assert cmd[cmd.index("--packet-in") + 1] == "ipc:///d/packets.ipc"
    assert cmd[cmd.index("--priority-queues") + 1] == "2"
    assert command.grpc_port == 5000
    assert Bmv2Command(grpc_addr="unix:/run/s.sock", thrift_port=1).grpc_port is None


def test_a_missing_or_failing_switch_is_a_clear_start_error(tmp_path: Path) -> None:
    with pytest.raises(Bmv2StartError, match="cannot run /nonexistent/simple_switch_grpc"):
        Bmv2Process(Bmv2Command(grpc_addr="127.0.0.1:1", thrift_port=2,
                                executable="/nonexistent/simple_switch_grpc"))
    script = tmp_path / "fake_switch"
    script.write_text("#!/bin/sh\necho 'no such interface' >&2\nexit 3\n")
    script.chmod(0o755)
    proc = Bmv2Process(Bmv2Command(grpc_addr="127.0.0.1:1", thrift_port=2, executable=str(script)),
                       tmp_path / "switch.log")
    with pytest.raises(Bmv2StartError, match=r"(?s)exited with status 3.*no such interface"):
        proc.wait_ready(timeout=10)
    proc.stop()


def test_a_switch_without_a_thrift_server_is_named_as_such(tmp_path: Path) -> None:
    """A build whose gRPC port opens but Thrift never does gets its cause named, not a one-minute timeout."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        grpc_port = probe.getsockname()[1]
    script = tmp_path / "grpc_only_switch"
    script.write_text(f"#!{sys.executable}\nimport socket, time\ns = socket.socket()\n"
                      f"s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
                      f"s.bind(('127.0.0.1', {grpc_port}))\ns.listen()\ntime.sleep(30)\n")
    script.chmod(0o755)
    proc = Bmv2Process(Bmv2Command(grpc_addr=f"127.0.0.1:{grpc_port}", thrift_port=1, executable=str(script)),
                       tmp_path / "switch.log")
    try:
        with pytest.raises(Bmv2StartError, match=r"gRPC server is up .* no Thrift server"):
            proc.wait_ready(timeout=20, thrift_grace=0.5)
    finally:
        proc.stop()


def test_free_ports_are_distinct_and_bindable() -> None:
    """BMv2's gRPC and Thrift ports come from one call: two picks in a row once gave the same port to both."""
    for _ in range(50):
        ports = free_ports(3)
        assert len(set(ports)) == 3
    with socket.socket() as a, socket.socket() as b:
        pa, pb = free_ports(2)
        a.bind(("127.0.0.1", pa))
        b.bind(("127.0.0.1", pb))
