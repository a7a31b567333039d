"""The control plane of a virtual fabric: one in-process P4Runtime gRPC server for all simulated switches (each
request goes to the switch its `device_id` names), and the unchanged fabric controller talking to it over
loopback gRPC (one channel, shared by the switches' sessions).

Virtual time is frozen whenever the controller works: bring-up happens before the first event, and every
later controller action (a reaction to a fault, adaptive-policy probes, counter reads) runs inside one event
handler, so the simulation does not advance until the gRPC calls have returned. Packet-outs arrive on server
threads; they are collected and injected at the barrier in a fixed order (switch name, then arrival order
on that switch's single stream), which keeps runs deterministic.
"""

from __future__ import annotations

import time
from typing import Any

from controller.artifacts import DEFAULT_PROGRAM, PipelineArtifacts, build_artifacts
from controller.fabric import FabricController
from controller.policies import Policy
from p4exec.p4runtime.server import P4RuntimeServer
from p4exec.runtime import gcpause
from vfabric.fabric import VirtualFabric


class ControlPlane:
    """`start()` serves every switch and runs the controller's bring-up; `close()` stops it all."""

    def __init__(self, fabric: VirtualFabric, policy: Policy, artifacts: PipelineArtifacts | None = None) -> None:
        self.fabric = fabric
        self.policy = policy
        self.artifacts = artifacts
        self.servers: dict[str, P4RuntimeServer] = {}  # switch name -> the server it is behind (one for all)
        self.controller: FabricController | None = None
        self.entries = 0
        self.timings: dict[str, float] = {}
        self.down = False  # controller stopped by a fault: no reactions until it restarts

    def start(self) -> FabricController:
        # The collector is paused for the bring-up: the servers' tables fill with entries that live for the
        # whole run, and its automatic passes over the fabric already built took 1.6 s of UPN 512's 7.9 s.
        with gcpause.paused():
            return self._start()

    def _start(self) -> FabricController:
        t0 = time.perf_counter()
        if self.artifacts is None:
            self.artifacts = build_artifacts(DEFAULT_PROGRAM, "p4exec")
        self.timings["compile"] = round(time.perf_counter() - t0, 3)
        t1 = time.perf_counter()
        switches = sorted(self.fabric.switches.items())
        if switches:
            # One server for all: a server per switch was a gRPC polling thread per switch (and a channel with
            # its own polling thread in the controller), 48 at UPN 512, each waking the interpreter several times
            # a second beside the simulator. No wall-clock ticker either: digests and idle timeouts are polled
            # at the control barriers, in virtual time.
            server = P4RuntimeServer.shared([sw for _name, sw in switches], "127.0.0.1:0", ticker=False).start()
            self.servers = {name: server for name, _sw in switches}
        self.timings["servers"] = round(time.perf_counter() - t1, 3)
        addresses = {name: srv.address for name, srv in self.servers.items()}
        # No background watchers: nothing may touch a switch while virtual time runs. Port changes reach the
        # controller as explicit reactions at fault + control_delay (see vfabric.run).
        self.controller = FabricController(self.fabric.topo, addresses, self.artifacts, self.policy,
                                           watch_switches=False, port_poll_s=None, workers=4)
        self.entries = self.controller.start()
        self._stop_wall_clock_helpers()
        self.timings.update({k: round(v, 3) for k, v in self.controller.state.timings.items()})
        self.barrier()
        return self.controller

    def _stop_wall_clock_helpers(self) -> None:
        """Policy helpers that run on wall-clock timers (the adaptive policy's probe sender) are stopped;
        vfabric.run sends their work in virtual time instead."""
        sender = getattr(self.policy, "sender", None)
        if sender is None:
            return
        sender.stop()
        self.policy.sender = None  # type: ignore[attr-defined]
        # What it sent before it stopped arrives asynchronously on the streams: wait for all of it and drop it,
        # so the virtual run starts from the same state every time.
        switches = self.fabric.switches.values()
        end = time.monotonic() + 10.0
        while sum(len(sw.packet_out_inbox) for sw in switches) < sender.sent and time.monotonic() < end:
            time.sleep(0.001)
        for sw in switches:
            sw.clear_packet_outs()

    def barrier(self, expect_packet_outs: int = 0, timeout_s: float = 10.0) -> int:
        """Wait until `expect_packet_outs` packet-outs have reached the switches, then inject all of them."""
        switches = self.fabric.switches
        end = time.monotonic() + timeout_s
        while expect_packet_outs and time.monotonic() < end:
            if sum(len(sw.packet_out_inbox) for sw in switches.values()) >= expect_packet_outs:
                break
            time.sleep(0.001)
        for name, sw in sorted(switches.items()):
            # what the data plane sent the controller (digests), at this instant; switch by switch, by name
            self.servers[name].services[sw.device_id].poll()
        return sum(sw.drain_packet_outs() for _name, sw in sorted(switches.items()))

    def close(self) -> None:
        if self.controller is not None:
            try:
                self.controller.close()
            except Exception:  # noqa: BLE001 - teardown goes on
                pass
        for srv in {id(s): s for s in self.servers.values()}.values():
            srv.stop(grace=0.2)
        self.servers.clear()

    def __enter__(self) -> ControlPlane:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
