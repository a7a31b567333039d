"""A switch that fails to start: bring-up stops with an error that quotes the switch's own output (its log
tail); `ethlab up` prints its first line, then the tail."""

from __future__ import annotations

import threading

import pytest

from ethlab.bringup import running_fabric
from ethlab.up_cmd import one_line
from topologies import load
from topologies.switches import SwitchStartError

pytestmark = pytest.mark.netns


def test_switch_start_failure_shows_its_log_tail() -> None:
    with pytest.raises(SwitchStartError) as err, running_fabric(load("leafspine"),
                                                                switch_args=("--no-such-option",)):
        pass
    text = str(err.value)
    assert "exited" in text and "--no-such-option" in text  # argparse's complaint, from the switch's output
    assert one_line(err.value).startswith("leaf1: p4exec switch exited") or "switch exited" in one_line(err.value)


def test_a_switch_that_dies_is_named_with_its_exit_status() -> None:
    """When a switch process dies mid-run, the fabric says which one and how, so a trial reports the crash
    instead of the controller's "connection refused" that follows it."""
    import signal

    with running_fabric(load("line", n=2)) as running:
        assert running.fabric.dead_switches() == {}
        victim = running.fabric.switch("s2")
        victim.proc.send_signal(signal.SIGKILL)
        victim.proc.wait(5)
        dead = running.fabric.dead_switches()
        assert list(dead) == ["s2"] and f"status {-signal.SIGKILL}" in dead["s2"]
    # The controller's restart watcher was retrying s2's port; it must not outlive the fabric, or it would
    # adopt the next switch that listens there (seen in CI: a later fabric's switch never answered arbitration).
    assert not [t for t in threading.enumerate() if t.name == "switch-watcher"]


def test_a_duplicate_election_id_is_refused_at_once() -> None:
    """A second client with the primary's election id gets INVALID_ARGUMENT (P4Runtime spec), and the client
    reports it once the switch ends the stream (after at most the 2 s a closing stream is given), not after its
    whole arbitration timeout."""
    import time

    import grpc

    from controller.client import SwitchConnection
    from controller.errors import ControllerError

    with running_fabric(load("line", n=1)) as running:
        ctl = running.controller
        node = running.topo.nodes["s1"]
        start = time.monotonic()
        with pytest.raises(ControllerError) as err:
            SwitchConnection(running.fabric.switch("s1").grpc_addr, device_id=node.device_id or 0,
                             election_id=ctl.election_id, name="intruder", timeout=10).connect()
        assert time.monotonic() - start < 5
        assert err.value.code == grpc.StatusCode.INVALID_ARGUMENT and "already used" in str(err.value)
