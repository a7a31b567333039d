"""`DataPlane._forward_one` (the batch path's one-copy case, accounting done in place) leaves exactly the counters
the generic `_copies` + `_send_out` + `_copy_done` leave: forwarded or tx_error for the ingress port, transmitted
counters and the rx pcap for the egress port, nothing in flight; a down port, a port the switch does not have and
the CPU port still take the generic path. No sockets: the ports' send is replaced by a recorder."""
from __future__ import annotations

from p4exec.switch.dataplane import DataPlane
from p4exec.switch.loop import SwitchLoop
from p4exec.switch.ports import SocketPort
from p4exec.switch.tm import TrafficManager


def plane(sent: list, refuse: set[int]) -> DataPlane:
    ports = [SocketPort(n, f"none{n}") for n in (1, 2, 3)]
    def recorder(n: int):
        def send(frame: bytes) -> bool:
            if n in refuse:
                return False
            sent.append((n, frame))
            return True
        return send

    for p in ports:
        p.send = recorder(p.num)  # type: ignore[method-assign]
    dp = DataPlane(ports, TrafficManager(), 255, None)
    dp.ports[3].up = False
    return dp


def run(lean: bool) -> tuple[dict, list]:
    sent: list = []
    dp = plane(sent, refuse={2})
    ps = dp.acct.received(1, 64)
    for port in (2, 1, 3, 7, 255, 1):
        for _ in range(port % 3 + 1):
            if lean:
                dp._forward_one(ps, port, bytes([port]) * 64, 0.0)
            else:
                SwitchLoop._forward_one(dp, ps, port, bytes([port]) * 64, 0.0)
    dp.flush_out()  # the lean path queues a batch's frames per port; the batch's end sends them
    return dp.acct.snapshot(), sent


def test_lean_forwarding_counts_as_the_generic_path() -> None:
    lean, generic = run(True), run(False)
    assert lean == generic
    snap, sent = lean
    assert snap["in_flight"] == 0 and len(sent) == 4
    by_reason = snap["ports"]["1"]["dropped_by_reason"]
    assert snap["ports"]["1"]["forwarded"] == 4 and by_reason["tx_error"] == 3
    assert by_reason["port_down"] == 1 and by_reason["no_port"] == 2
    assert snap["ports"]["1"]["transmitted"] == 4
