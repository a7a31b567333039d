"""The fabric controller on a real leaf-spine of `p4exec switch` processes in namespaces, over P4Runtime:
installed entries equal routing's expectation (read back from the switches), all pairs reach each other,
a failed link (API or carrier) is never used again while traffic keeps flowing, a restarted switch is
re-pushed and re-populated by itself, and a restarted controller reconciles by reading instead of
re-inserting. The tests share one fabric and run in order; each leaves it healthy."""

from __future__ import annotations

import ipaddress
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from p4.v1 import p4runtime_pb2 as pb

from controller.codec import decode
from controller.fabric import FabricController
from controller.routing import compute_routes
from ethlab.bringup import RunningFabric, check_reachability, running_fabric
from tests.support.fabric import flows, send_from_host, table_map, tx_packets, wait_event, wait_for
from topologies import load
from topologies.mininet_builder import switch_ifname

pytestmark = pytest.mark.netns

UPLINK_SPINE1 = 3  # leaf1 port 3 -> spine1 (topologies' leafspine: hosts on 1-2, spines on 3-4)


@pytest.fixture(scope="module")
def running() -> Iterator[RunningFabric]:
    with running_fabric(load("leafspine"), policy="ecmp") as fab:
        yield fab


def _installed_routes(controller: FabricController, switch: str) -> dict[int, tuple[int, ...]]:
    groups = {gid: tuple(p[1:1 + p[0]]) for gid, p in table_map(controller, switch, "nhop_group").items()}
    return {eid: groups[gid] for eid, (gid, _dst_index) in table_map(controller, switch, "eid_table").items()}


def test_installed_entries_equal_routing(running: RunningFabric) -> None:
    expected = compute_routes(running.topo)
    for name, want in expected.items():
        conn = running.controller.connection(name)
        want_eid = {r.eid: want.groups[r.group_id] for r in want.routes}
        assert _installed_routes(running.controller, name) == want_eid, name
        eid_rows = table_map(running.controller, name, "eid_table")
        assert all(dst_index == eid for eid, (_gid, dst_index) in eid_rows.items())
        ipv4 = {int(ipaddress.IPv4Address(r.ipv4)): r.eid for r in want.routes}
        lpm = {decode(e.match[0].lpm.value): (e.match[0].lpm.prefix_len, decode(e.action.action.params[1].value))
               for e in conn.read_table("ipv4_lpm")}
        assert lpm == {ip: (32, eid) for ip, eid in ipv4.items()}, name
        macs = {port: (int(src.replace(":", ""), 16), int(dst.replace(":", ""), 16))
                for port, (src, dst) in want.neighbor_macs.items()}
        assert {p: tuple(v) for p, v in table_map(running.controller, name, "neighbor_mac").items()} == macs
        groups = {g.action_profile_group.group_id: sorted(m.member_id for m in g.action_profile_group.members)
                  for g in conn.read(pb.ActionProfileGroup())}
        nhop = {gid: sorted(p[1:1 + p[0]]) for gid, p in table_map(running.controller, name, "nhop_group").items()}
        assert groups == nhop, name
        assert sorted(table_map(running.controller, name, "ecn_config")) == sorted(want.neighbor_macs)
    # leaf1 reaches the hosts of leaf2 over both spines, its own hosts directly
    assert _installed_routes(running.controller, "leaf1") == {1: (1,), 2: (2,), 3: (3, 4), 4: (3, 4)}


def test_all_pairs_reachable(running: RunningFabric) -> None:
    reach = check_reachability(running)
    assert reach.ok, reach.failed
    assert reach.tried == {0: 12}


def _deliver(running: RunningFabric, tmp: Path, n: int = 64) -> tuple[int, int]:
    """Send n ETH+ flows h1 -> h3; returns (packets leaf1 sent towards spine1, packets leaf2 handed to h3)."""
    ctl = running.controller
    before = tx_packets(ctl, "leaf1", UPLINK_SPINE1), tx_packets(ctl, "leaf2", 1)
    send_from_host(running, "h1", flows(running, "h1", "h3", n), tmp)
    wait_for(lambda: tx_packets(ctl, "leaf2", 1) - before[1] >= n, timeout=20)
    time.sleep(0.3)
    return tx_packets(ctl, "leaf1", UPLINK_SPINE1) - before[0], tx_packets(ctl, "leaf2", 1) - before[1]


def test_failed_link_is_avoided(running: RunningFabric, tmp_path: Path) -> None:
    ctl = running.controller
    via_spine1, delivered = _deliver(running, tmp_path)
    assert delivered == 64 and 0 < via_spine1 < 64  # ECMP uses both spines
    took = ctl.link_down("leaf1", "spine1")
    assert took < 5
    via_spine1, delivered = _deliver(running, tmp_path)
    assert (via_spine1, delivered) == (0, 64)  # nothing into the dead port, nothing lost
    assert _installed_routes(ctl, "leaf1")[3] == (4,)  # recomputed: only spine2 left
    ctl.link_up("leaf1", "spine1")
    assert _installed_routes(ctl, "leaf1")[3] == (3, 4)
    via_spine1, delivered = _deliver(running, tmp_path)
    assert delivered == 64 and via_spine1 > 0


def test_carrier_loss_seen_by_the_switch_reroutes(running: RunningFabric, tmp_path: Path) -> None:
    ctl = running.controller
    iface = switch_ifname(running.fabric.run, running.topo.nodes["leaf1"].device_id or 0, UPLINK_SPINE1)
    start = time.monotonic()
    subprocess.run(["ip", "link", "set", iface, "down"], check=True, timeout=10)
    try:
        assert wait_event(ctl, "link_down", start, timeout=10), ctl.state.events[-5:]
        assert _installed_routes(ctl, "leaf1")[3] == (4,)
        via_spine1, delivered = _deliver(running, tmp_path)
        assert (via_spine1, delivered) == (0, 64)
    finally:
        start = time.monotonic()
        subprocess.run(["ip", "link", "set", iface, "up"], check=True, timeout=10)
    assert wait_event(ctl, "link_up", start, timeout=10)
    assert wait_for(lambda: _installed_routes(ctl, "leaf1")[3] == (3, 4), timeout=5)


def test_restarted_switch_is_repushed_and_repopulated(running: RunningFabric) -> None:
    ctl = running.controller
    start = time.monotonic()
    running.stop_switch("spine1")
    running.start_switch("spine1")
    assert wait_event(ctl, "switch_lost", start, timeout=10), ctl.state.events[-5:]
    assert wait_event(ctl, "switch_recovered", start, timeout=60), ctl.state.events[-5:]
    assert "spine1" not in ctl.state.down_switches
    assert ctl.connection("spine1").pipeline_cookie() == ctl.cookie
    assert _installed_routes(ctl, "spine1") == {1: (1,), 2: (1,), 3: (2,), 4: (2,)}
    reach = check_reachability(running)
    assert reach.ok, reach.failed


def test_restarted_controller_reconciles_by_reading(running: RunningFabric) -> None:
    first = running.controller
    # Take one entry away behind the controller's back: the diff must put exactly that back.
    leaf1 = first.connection("leaf1")
    leaf1.delete(leaf1.table_entry("eid_table", {"hdr.ethplus.dst_id": 3}))
    first.close()
    second = FabricController(running.topo, running.fabric.grpc_addrs(), first.artifacts, first.policy)
    running.controller = second  # torn down with the fabric
    second.start(reconcile=True)
    assert second.state.pushed == set()  # every switch kept its pipeline (same cookie)
    # Missing: the deleted entry only. Earlier reroutes left groups nobody uses any more: those are deleted
    # (entries pointing at them first). Nothing is modified, nothing re-inserted.
    counts = second.state.reconciled
    assert {n: (c["insert"], c["modify"]) for n, c in counts.items()} == {
        "leaf1": (1, 0), "leaf2": (0, 0), "spine1": (0, 0), "spine2": (0, 0)}
    assert all(c["unchanged"] > 0 for c in counts.values())
    assert sum(second.state.written.values()) == sum(c["insert"] + c["delete"] for c in counts.values())
    assert _installed_routes(second, "leaf1")[3] == (3, 4)
    assert second.reconcile() == 0  # in sync now: a second pass writes nothing
    reach = check_reachability(running)
    assert reach.ok, reach.failed
