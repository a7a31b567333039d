"""Real bring-up as root: named namespaces, per-plane veths, addresses, a gateway per plane, switches; then teardown
by our own cleanup, checking that nothing carrying the run's prefix is left (ip netns, ip link, pids)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ethlab.cli import main
from p4exec.switch.forkserver import ForkedProcess, pid_alive
from tests.support.bmv2 import needs_bmv2
from tests.support.bridge import BridgeSwitch
from topologies import build
from topologies.bmv2_launch import PRIORITY_QUEUES, SWITCH, accepts_priority_queues
from topologies.mininet_builder import Fabric, FabricOptions
from topologies.run_records import RunState, proc_start_time

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.netns


# State files go to the default /run/ethlab, so a test killed half-way leaves a run that `ethlab clean` finds.


def leftovers(run: RunState) -> list[str]:
    ns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    found = [ln.split()[0] for ln in ns.splitlines() if ln.startswith(run.prefix)]
    found += [ln.split(":")[1].strip().split("@")[0] for ln in links.splitlines() if run.prefix in ln]
    found += [f"pid {k}" for k, (pid, start) in run.pids.items() if proc_start_time(pid) == start]
    return found


def ping(fabric: Fabric, host: str, ip: str) -> bool:
    r = subprocess.run(["ip", "netns", "exec", fabric.netns(host), "ping", "-c", "1", "-W", "2", ip],
                       capture_output=True, text=True, timeout=10)
    return r.returncode == 0


def ip_routes(fabric: Fabric, host: str) -> str:
    return subprocess.run(["ip", "-n", fabric.netns(host), "-4", "route", "show"], capture_output=True,
                          text=True).stdout


def test_line_bridged_ping_then_nothing_left():
    f = Fabric(build("line", n=3), FabricOptions(switch_cls=BridgeSwitch))
    with f:
        f.start()
        assert ping(f, "h1", "10.0.0.2")
        # a bridge forwards on the destination MAC: its hosts are on-link and ARP for their peers
        neigh = subprocess.run(["ip", "-n", f.netns("h1"), "neigh", "show", "10.0.0.2"], capture_output=True,
                               text=True).stdout
        assert "02:e1:00:00:00:02" in neigh and "PERMANENT" not in neigh
        assert "10.0.0.0/16 dev eth0 proto kernel scope link" in ip_routes(f, "h1")
        assert len(f.run.interfaces) == 2 + 2 * 2 + 3  # host links, switch-switch links (both ends), bridges
        assert leftovers(f.run)
    assert leftovers(f.run) == []
    assert not f.run.path.exists()


def test_each_plane_is_its_own_network():
    t = build("erack", gpus=3, planes=2)
    with Fabric(t, FabricOptions(switch_cls=BridgeSwitch)) as f:
        f.start()
        out = subprocess.run(["ip", "-n", f.netns("gpu0"), "-o", "link"], capture_output=True, text=True).stdout
        names = sorted(ln.split(":")[1].strip().split("@")[0] for ln in out.splitlines())
        assert names == ["eth0", "eth1", "lo"]
        addr = subprocess.run(["ip", "-n", f.netns("gpu2"), "-o", "addr", "show", "eth1"], capture_output=True,
                              text=True).stdout
        assert "10.1.0.3/16" in addr
        mac = open(f"/proc/{f.host('gpu2').pid}/root/sys/class/net/eth1/address").read().strip()
        assert mac == t.endpoints["gpu2"].interfaces[1].mac
        assert ping(f, "gpu0", "10.1.0.3") and ping(f, "gpu1", "10.0.0.3")
        # the switch port of gpu2 on plane 1 is port 3 of device 2, named after both
        assert os.path.exists(f"/sys/class/net/{f.run.prefix}s2-3")
        # switch ports are up but have no IPv6 address: they send nothing of their own into the switch
        port = subprocess.run(["ip", "-d", "link", "show", f"{f.run.prefix}s2-3"], capture_output=True,
                              text=True).stdout
        assert "addrgenmode none" in port and ",UP," in port
        assert subprocess.run(["ip", "-6", "addr", "show", "dev", f"{f.run.prefix}s2-3"], capture_output=True,
                              text=True).stdout.strip() == ""
    assert leftovers(f.run) == []


def test_ethlab_clean_removes_a_run_whose_owner_forgot_it(capsys):
    f = Fabric(build("leafspine", spines=1), FabricOptions(switch_cls=BridgeSwitch)).build()
    f.start()
    run = RunState.load(f.run.run_id)  # what `ethlab clean` sees: only the state file
    assert len(run.netns) == 4 and len(run.pids) == 4 + 3
    assert main(["clean", "--run", run.run_id]) == 0
    assert "4 namespaces" in capsys.readouterr().out
    assert leftovers(run) == []
    f.net = None  # the run is gone; nothing for the builder to stop


def test_p4exec_switch_process_lifecycle():
    with Fabric(build("line", n=1), FabricOptions(rate_scale=1e-3)) as f:
        f.start()
        sw = f.switch("s1")
        assert sw.grpc_addr == f"unix:{f.socket_dir}/s1.sock"  # inside fabrics: a Unix socket, not TCP
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(2)
            s.connect(sw.grpc_addr.removeprefix("unix:"))
        # forked from the fabric's warmed-up fork server: the process runs exactly this command line
        assert f.forkserver is not None and isinstance(sw.proc, ForkedProcess) and sw.proc.poll() is None
        assert open(f"/proc/{sw.proc.pid}/comm").read().strip() == "p4exec-switch"
        assert int(open(f"/proc/{sw.proc.pid}/stat").read().rsplit(")", 1)[1].split()[1]) == f.forkserver.pid
        cmdline = sw.cmdline
        assert cmdline[:3] == [sys.executable, "-m", "p4exec.switch"]
        assert open(f"/proc/{sw.proc.pid}/cmdline").read().rstrip("\0").split("\0") == cmdline  # ps shows it
        i = cmdline.index("--no-p4")
        assert cmdline[i + 1:i + 5] == ["-i", f"1@{f.run.prefix}s1-1", "-i", f"2@{f.run.prefix}s1-2"]
        assert cmdline[cmdline.index("--device-id") + 1] == "1"
        assert cmdline[cmdline.index("--grpc-server-addr") + 1] == sw.grpc_addr
        assert cmdline[cmdline.index("--cpu-port") + 1] == "255"
        assert "1:833.333" in cmdline  # 10 Gbit/s x 1e-3 / (8 x 1500 B)
        assert f.run.pids["switch:s1"][0] == sw.proc.pid
        pid = sw.proc.pid
    assert not os.path.exists(f"/proc/{pid}") or proc_start_time(pid) != f.run.pids["switch:s1"][1]
    assert leftovers(f.run) == []


def test_p4exec_switch_started_without_fork_server():
    with Fabric(build("line", n=1), FabricOptions(fork_switches=False)) as f:
        f.start()
        sw = f.switch("s1")
        assert f.forkserver is None and isinstance(sw.proc, subprocess.Popen)
        cmdline = open(f"/proc/{sw.proc.pid}/cmdline").read().split("\0")
        assert cmdline[:3] == [sys.executable, "-m", "p4exec.switch"] and "--no-p4" in cmdline
    assert leftovers(f.run) == []


def test_fork_server_end_stops_its_switches_and_exit_status_is_reported():
    """No switch outlives its fork server (however its owner ended); a switch's exit status reaches the
    fabric as Popen's would."""
    with Fabric(build("line", n=2), FabricOptions()) as f:
        f.start()
        s1, s2 = f.switch("s1"), f.switch("s2")
        s1.proc.kill()
        assert s1.proc.wait(5) == -9 and s1.proc.returncode == -9
        assert "s1" in f.dead_switches() and "s2" not in f.dead_switches()
        pid = s2.proc.pid
        assert f.forkserver is not None
        f.forkserver.proc.stdin.close()  # as when the process holding the pipe dies
        deadline = time.monotonic() + 10
        while pid_alive(pid):  # gone, or a zombie: checked in one read (it may exit between two)
            assert time.monotonic() < deadline, "switch survived its fork server"
            time.sleep(0.05)
    assert leftovers(f.run) == []


def test_bmv2_switch_flags():
    from topologies.switches import Bmv2Switch

    opts = FabricOptions(switch_cls=Bmv2Switch, json_path="/x/prog.json", switch_params={"pcap_dir": "/tmp/caps"})
    with Fabric(build("line", n=1), opts) as f:
        sw = f.switch("s1")
        cmd = sw.command()
        # --pcap has an implicit value in simple_switch (boost): the directory must be attached with "="
        assert "--pcap=/tmp/caps" in cmd and "/tmp/caps" not in cmd
        assert cmd[:6] == ["simple_switch_grpc", "/x/prog.json", "-i", f"1@{f.run.prefix}s1-1", "-i",
                           f"2@{f.run.prefix}s1-2"]
        tail = cmd[cmd.index("--"):]
        if accepts_priority_queues(SWITCH):  # a current BMv2, or none installed (1.15.0: compiled in)
            assert tail == ["--", "--grpc-server-addr", sw.grpc_addr, "--priority-queues", "8", "--cpu-port", "255"]
        else:
            assert tail == ["--", "--grpc-server-addr", sw.grpc_addr, "--cpu-port", "255"]
        # BMv2 drops (uncounted) a packet whose priority has no queue: ethplus.p4's feedback priority needs one
        prio = re.search(r"PRIO_CONTROL\s*=\s*(\d+)", (ROOT / "p4src/include/headers.p4").read_text())
        assert prio and int(prio.group(1)) < PRIORITY_QUEUES == 8
        assert cmd[cmd.index("--thrift-port") + 1] == str(sw.thrift_port)
        assert sw.thrift_port >= 51100 and sw.thrift_port not in f.run.grpc_ports.values()
    assert leftovers(f.run) == []


def test_a_switch_that_cannot_start_is_reported_and_everything_is_removed(tmp_path):
    from topologies.switches import SwitchStartError

    f = Fabric(build("line", n=2), FabricOptions(json_path=str(tmp_path / "missing.json"), ready_timeout=30))
    with pytest.raises(SwitchStartError, match=r"(?s)s1: p4exec switch exited \(status 1\).*missing.json"):
        with f:
            f.start()
    assert leftovers(f.run) == []


def test_cleanup_never_deletes_an_interface_it_did_not_record():
    f = Fabric(build("line", n=2), FabricOptions(switch_cls=BridgeSwitch))
    # in our link group but not recorded: must survive the cleanup (and blocks the batched group delete)
    stranger, peer = f"{f.run.prefix}zz", f"{f.run.prefix}zy"
    try:
        f.build()
        subprocess.run(["ip", "link", "add", stranger, "group", str(f.run.link_group), "type", "veth", "peer",
                        "name", peer], check=True)
        rep = f.stop()
        assert os.path.exists(f"/sys/class/net/{stranger}")
        assert stranger not in rep.interfaces and len(rep.netns) == 2
        assert sorted(leftovers(f.run)) == [peer, stranger]
    finally:
        f.stop()
        subprocess.run(["ip", "link", "del", stranger], capture_output=True)
    assert leftovers(f.run) == []


def test_set_link_fails_and_restores_a_cable():
    with Fabric(build("line", n=2), FabricOptions(switch_cls=BridgeSwitch)) as f:
        f.start()
        assert ping(f, "h1", "10.0.0.2")
        idx = f.set_link("s1", "s2", up=False)
        assert f.topo.links[idx].ends()[0].owner == "s1"
        carrier = open(f"/sys/class/net/{f.run.prefix}s2-1/operstate").read().strip()
        assert carrier == "down"
        assert not ping(f, "h1", "10.0.0.2")
        f.set_link("h2", "s2", up=False)
        out = subprocess.run(["ip", "-n", f.netns("h2"), "-o", "link", "show", "eth0"], capture_output=True,
                             text=True).stdout
        assert "state DOWN" in out
        f.set_link("s2", "s1", up=True)
        f.set_link("h2", "s2", up=True)
        assert ping(f, "h1", "10.0.0.2")
        with pytest.raises(KeyError):
            f.set_link("h1", "s2", up=False)
    assert leftovers(f.run) == []


def test_bmv2_queues_set_over_thrift_once_its_port_listens(tmp_path):
    """simple_switch_grpc opens Thrift after gRPC: queues are set once the Thrift port listens, as
    `set_all_egress_queue_depths` (packets) and `set_egress_queue_rate` (integer packets/s) calls on the
    switch's Thrift session. A stand-in Thrift server (tests/support/fake_thrift.py) records the calls."""
    from controller.bmv2 import QueueSetting
    from controller.bmv2_thrift import forget_session
    from controller.targets import BMV2, bmv2_queue_settings, configure_bmv2_queues
    from tests.support.fake_thrift import FakeBmv2Thrift
    from topologies.switches import Bmv2Switch, SwitchStartError

    opts = FabricOptions(switch_cls=Bmv2Switch, rate_scale=1e-3, queue_depth=64, switch_params=BMV2.switch_params())
    with Fabric(build("line", n=1), opts) as f:
        sw = f.switch("s1")
        assert sw.on_ready is configure_bmv2_queues  # the Target's configuration step
        assert bmv2_queue_settings(sw) == [QueueSetting(0, depth=64), QueueSetting(1, rate_pps=833),
                                           QueueSetting(2, rate_pps=833)]
        cmd = sw.command()  # p4exec's queue and stats options are not simple_switch_grpc's
        assert not {"--queue-depth", "--queue-rate-port", "--stats-file", "--log-file"} & set(cmd)
        sw.proc = subprocess.Popen(["sleep", "30"])  # stands for the running switch process
        fake = None
        try:
            with pytest.raises(SwitchStartError, match=f"Thrift port {sw.thrift_port} not open"):
                configure_bmv2_queues(sw, thrift_timeout=0.3)
            fake = FakeBmv2Thrift({})
            sw.thrift_port = fake.port
            sw.after_start()
        finally:
            sw.proc.kill()
            sw.proc.wait()
            if fake is not None:
                fake.close()
                forget_session(fake.port)
    assert fake.calls == [("simple_switch", "set_all_egress_queue_depths", 64),
                          ("simple_switch", "set_egress_queue_rate", 1, 833),
                          ("simple_switch", "set_egress_queue_rate", 2, 833)]


def test_ping_many_answers_and_misses_through_the_kernel():
    """The in-process pinger sends real echoes from inside the hosts' namespaces: a path that works answers,
    an address nobody has and a cut link do not (and each costs at most its timeout)."""
    from topologies.ping import ping_many

    with Fabric(build("line", n=3), FabricOptions(switch_cls=BridgeSwitch)) as f:
        f.start()
        ns = {h: f.netns(h) for h in ("h1", "h2")}
        missing = ping_many({ns["h1"]: ["10.0.0.2", "10.0.0.99"], ns["h2"]: ["10.0.0.1"]}, timeout_s=1.0)
        assert missing == {ns["h1"]: {"10.0.0.99"}, ns["h2"]: set()}
        f.set_link("s2", "s3", up=False)
        t0 = time.monotonic()
        missing = ping_many({ns["h1"]: ["10.0.0.2"], ns["h2"]: ["10.0.0.1"]}, timeout_s=1.0)
        assert missing == {ns["h1"]: {"10.0.0.2"}, ns["h2"]: {"10.0.0.1"}}
        assert time.monotonic() - t0 < 5


@pytest.mark.parametrize("target", ["p4exec", pytest.param("bmv2", marks=needs_bmv2)])
def test_each_plane_goes_through_one_gateway_neighbour_and_every_peer_answers(target):
    """Behind a routing switch a host has ONE permanent neighbour per plane, the switch port it is cabled to
    (no entry per peer, no ARP), and a route of the plane's prefix via it. Real echoes through the P4
    program prove it: a reply is taken by the kernel only if the switch wrote the receiver's own MAC."""
    from ethlab.bringup import running_fabric
    from topologies.mininet_builder import GATEWAY_IPV4
    from topologies.model import switch_mac
    from topologies.ping import ping_many

    t = build("erack", gpus=3, planes=2)
    with running_fabric(t, target=target) as fab:
        f = fab.fabric
        for host, ep in t.endpoints.items():
            ports = {ln.plane: ln.other(host) for ln in t.links if host in (ln.a.owner, ln.b.owner)}
            gateways = {f"{GATEWAY_IPV4} dev eth{p} lladdr "
                        f"{switch_mac(t.nodes[far.owner].device_id or 0, far.number)} PERMANENT"
                        for p, far in ports.items()}
            assert neighbours(f, host) == gateways and len(gateways) == 2
            assert {" ".join(line.split()) for line in ip_routes(f, host).splitlines()} == {
                f"10.{p}.0.0/16 via {GATEWAY_IPV4} dev eth{p} onlink" for p in ep.interfaces}
        targets = {f.netns(h): [itf.ipv4 for other, o in t.endpoints.items() if other != h
                                for itf in o.interfaces.values()] for h in t.endpoints}
        assert ping_many(targets, timeout_s=2.0) == {ns: set() for ns in targets}
        for host in t.endpoints:  # nothing was ARPed or learned on the way
            assert all(line.startswith(GATEWAY_IPV4) for line in neighbours(f, host))
    assert leftovers(f.run) == []


def neighbours(fabric: Fabric, host: str) -> set[str]:
    out = subprocess.run(["ip", "-n", fabric.netns(host), "neigh", "show"], capture_output=True, text=True).stdout
    return {" ".join(line.split()) for line in out.splitlines()}
