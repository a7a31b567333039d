"""The Target values: what differs between p4exec and BMv2 is data in one place, and each part does what
its target needs (without switches: the parts are checked on their own)."""

from __future__ import annotations

import pytest

from controller.artifacts import P4C_BMV2_TOOLCHAIN, P4EXEC_TOOLCHAIN
from controller.bmv2 import Bmv2SideChannel
from controller.targets import BMV2, P4EXEC, TARGETS, P4ExecQueue, configure_bmv2_queues, target_named
from topologies.switches import Bmv2Switch, P4ExecSwitch


def test_registry_and_lookup() -> None:
    assert TARGETS == {"p4exec": P4EXEC, "bmv2": BMV2}
    assert target_named("bmv2") is BMV2
    with pytest.raises(ValueError, match="unknown target 'tofino'"):
        target_named("tofino")


def test_capabilities_and_parts() -> None:
    assert P4EXEC.switch_cls is P4ExecSwitch and BMV2.switch_cls is Bmv2Switch
    assert P4EXEC.toolchain is P4EXEC_TOOLCHAIN and BMV2.toolchain is P4C_BMV2_TOOLCHAIN
    assert P4EXEC.reports_port_status and not BMV2.reports_port_status
    assert P4EXEC.takes_seed and not BMV2.takes_seed
    assert P4EXEC.side_channel("leaf1", None) is None
    cli = BMV2.side_channel("leaf1", 51100)
    assert isinstance(cli, Bmv2SideChannel) and cli.thrift_port == 51100 and cli.name == "leaf1"
    assert P4EXEC.switch_params() == {} and BMV2.switch_params() == {"on_ready": configure_bmv2_queues}
    assert set(P4EXEC.versions()) == {"p4exec"} and set(BMV2.versions()) == {"bmv2"}


def test_toolchains_name_their_outputs() -> None:
    from pathlib import Path

    cmd = P4C_BMV2_TOOLCHAIN.command.__name__, P4EXEC_TOOLCHAIN.command.__name__
    assert cmd == ("_p4c_command", "_p4exec_command")
    assert P4EXEC_TOOLCHAIN.p4info_path(Path("/b"), "prog") == Path("/b/prog.p4exec.p4info.txtpb")
    assert P4C_BMV2_TOOLCHAIN.p4info_path(Path("/b"), "prog") == Path("/b/prog.bmv2.p4info.txt")
    assert P4C_BMV2_TOOLCHAIN.load_binary and not P4EXEC_TOOLCHAIN.load_binary


def test_p4exec_queue_channel_needs_a_switch() -> None:
    """The p4exec queue channel is a P4Runtime session of its own role: with no switch it fails clearly."""
    from controller.errors import ControllerError

    channel = P4ExecQueue("127.0.0.1:1", 1, "s1", timeout_s=0.5)  # nothing listens there: no need to wait 5 s
    with pytest.raises(ControllerError, match="no P4Runtime server at 127.0.0.1:1"):
        channel.set_queue(1, rate_pps=100)
