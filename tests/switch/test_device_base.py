"""The three devices the P4Runtime server can serve share one base (p4exec/device/base.py): the same
program lifecycle, listener bookkeeping and queue settings, whatever their ports and clock."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from p4exec.device.base import DeviceBase, PortInfo
from p4exec.switch.dataplane import DataPlane
from p4exec.switch.device import SwitchDevice
from p4exec.switch.inprocess import InProcessDevice
from p4exec.switch.tm import QueueConfig, TrafficManager
from vfabric.events import Simulator
from vfabric.switch import VirtualSwitch

PROGRAM = Path(__file__).resolve().parents[2] / "p4src" / "basic_l3.p4"


@pytest.fixture(params=["in-process", "switch", "virtual"])
def device(request) -> Iterator[DeviceBase]:
    if request.param == "in-process":
        yield InProcessDevice(device_id=1, ports=(1, 2))
    elif request.param == "switch":
        dp = DataPlane([], TrafficManager(), 255, None)
        try:
            yield SwitchDevice(dp, device_id=1)
        finally:
            dp.close()
    else:
        yield VirtualSwitch(Simulator(), "s1", 1, QueueConfig())


def test_a_program_goes_live_through_the_base(device: DeviceBase) -> None:
    assert device.program is None  # type: ignore[attr-defined]
    program = device.load_config(None, PROGRAM.read_bytes())
    assert device.program is None, "VERIFY leaves the live pipeline alone"  # type: ignore[attr-defined]
    device.commit(program)
    assert device.program is program  # type: ignore[attr-defined]
    assert device.control(lambda: 42) == 42


def test_a_bad_program_is_refused_with_the_specs_code(device: DeviceBase) -> None:
    from p4exec.runtime import RuntimeOpError

    with pytest.raises(RuntimeOpError) as err:
        device.load_config(None, b"control C() { apply { x = ; } }")
    assert err.value.code == "INVALID_ARGUMENT"
    assert device.program is None  # type: ignore[attr-defined]


def test_queue_settings_are_kept_and_handed_out_as_copies(device: DeviceBase) -> None:
    got = device.set_queue(3, depth=17, rate_pps=1000)
    assert (got.depth, got.rate_pps) == (17, 1000)
    got.depth = 1  # type: ignore[misc]  # a copy: the live setting stays
    assert device.queue_config(3).depth == 17
    assert device.queue_config(9).depth == QueueConfig().depth  # a port never set: the default


def test_listeners_are_kept_once(device: DeviceBase) -> None:
    seen: list[object] = []
    device.add_packet_in_listener(seen.append)
    device._emit_packet_in(b"frame")
    device.remove_packet_in_listener(seen.append)
    device._emit_packet_in(b"again")
    device.add_digest_listener(lambda i, v: seen.append((i, v)))
    device._emit_digest(5, [1, 2])
    device.add_port_listener(lambda p, up: seen.append((p, up)))
    device._emit_port(2, False)
    assert seen == [b"frame", (5, [1, 2]), (2, False)]
    assert all(isinstance(p, PortInfo) for p in device.port_status().values())  # type: ignore[attr-defined]
