"""Bring a topology model up in Mininet: hosts in named namespaces with one interface per plane, veth links,
addresses and a gateway route per plane, and one switch process per model switch.

Kernel names (all start with `el<run-id>` so they can never be mistaken for someone else's):
  host namespace        el<run>-<host>            (interfaces inside: eth<plane>)
  switch port (root)    el<run>s<device-id>-<port>
Every name and pid is written to the run state before or as it is created; `Fabric.stop()` and
`ethlab clean` remove exactly those.
"""

from __future__ import annotations

import ipaddress
import os
import shutil
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mininet.link import Link
from mininet.net import Mininet

from p4exec.privdir import ensure_private_dir, open_new
from p4exec.switch.forkserver import ForkServer
from topologies.cleanup import CleanReport, clean_run
from topologies.cpu import tree_cpu_s
from topologies.model import Interface, Topology, switch_mac
from topologies.netns import entered, named, tx_checksum_off, write_sysctl
from topologies.portguard import guard_ports, table_name
from topologies.run_records import RunState, new_run_id, proc_start_time
from topologies.rundirs import new_run_dir, socket_dir
from topologies.switches import (
    Bmv2Switch,
    EthlabHost,
    P4ExecSwitch,
    P4Switch,
    PrecreatedLink,
    allocate_ports,
    attach_netns,
)


@dataclass
class FabricOptions:
    """How to realise the model. `rate_scale` turns nominal link rates into switch queue rates
    (e.g. 1e-4: a 400 Gbit/s link is served at 40 Mbit/s); None leaves queues unlimited."""

    switch_cls: type[P4Switch] = P4ExecSwitch
    json_path: str | None = None  # program loaded at start; None: wait for SetForwardingPipelineConfig
    log_dir: str | None = None  # default: a fresh private directory (rundirs.new_run_dir)
    rate_scale: float | None = None
    mean_packet_bytes: int = 1500  # for turning bit rates into the packets/s both targets take
    queue_depth: int | None = None
    grpc_base_port: int = 50100
    cpu_port: int | None = 255
    ready_timeout: float = 60.0
    switch_params: dict[str, Any] = field(default_factory=dict)
    label: str = ""  # recorded in the run state (e.g. "up"), for clean(label=...)
    # p4exec: fork the switches from one warmed-up process (p4exec/switch/forkserver.py), which compiles
    # `preload_config` (the device config the controller will push) once for all of them.
    fork_switches: bool = True
    preload_config: bytes | None = None
    # MTU of every link's veth pair (None: the kernel's 1500): room for the link layer's 8-byte LLR shim
    link_mtu: int | None = None


def switch_ifname(run: RunState, device_id: int, port: int) -> str:
    name = f"{run.prefix}s{device_id}-{port}"
    assert len(name) <= 15, name
    return name


def host_netns(run: RunState, host: str) -> str:
    return f"{run.prefix}-{host}"


class Fabric:
    """One emulated fabric: build() creates hosts and links, start() the switches, stop() removes it all.

    Use as a context manager so a failure half-way still removes everything that was created."""

    def __init__(self, topo: Topology, options: FabricOptions | None = None, run_id: str | None = None) -> None:
        self.topo = topo
        self.opts = options or FabricOptions()
        self.run = RunState(run_id or new_run_id(), topology=topo.name, label=self.opts.label)
        self.run.log_dir = self.opts.log_dir or str(new_run_dir(self.run.run_id))
        self.socket_dir: Path | None = None  # root-only directory of the switches' gRPC sockets (build())
        self.net: Mininet | None = None
        self.forkserver: ForkServer | None = None
        self.timings: dict[str, float] = {}
        self.cpu_timings: dict[str, float] = {}  # CPU seconds of our process tree per phase (topologies.cpu)
        self.stop_timings: dict[str, float] = {}  # seconds per step of the last stop()
        self._cpu_mark = tree_cpu_s()
        self.started = False

    # ---- accessors ----------------------------------------------------------------------------------
    def host(self, name: str) -> EthlabHost:
        assert self.net is not None
        return self.net.get(name)

    def switch(self, name: str) -> P4Switch:
        assert self.net is not None
        return self.net.get(name)

    def netns(self, host: str) -> str:
        return host_netns(self.run, host)

    def dead_switches(self) -> dict[str, str]:
        """Switches whose process has exited, with its status and the end of its output: when the controller
        cannot reach a switch, this says why (a crash) rather than only "connection refused"."""
        if self.net is None or not self.started:
            return {}
        dead = {}
        for node in self.topo.switches:
            sw = self.switch(node.name)
            if sw.proc is not None and sw.proc.poll() is not None:
                dead[node.name] = f"exited with status {sw.proc.returncode}; {sw.out_path}:\n{sw.tail(8)}"
        return dead

    def grpc_addrs(self) -> dict[str, str]:
        """Switch name -> gRPC address for the controller (unix:PATH for p4exec, 127.0.0.1:PORT for BMv2)."""
        return {n.name: self.switch(n.name).grpc_addr for n in self.topo.switches}

    def link_ifnames(self, index: int) -> list[tuple[str | None, str]]:
        """(netns or None for the root namespace, interface name) of both ends of topo.links[index]."""
        out: list[tuple[str | None, str]] = []
        link = self.topo.links[index]
        for end in link.ends():
            node = self.topo.nodes[end.owner]
            if node.is_switch:
                assert node.device_id is not None
                out.append((None, switch_ifname(self.run, node.device_id, end.number)))
            else:
                out.append((self.netns(end.owner), self.topo.endpoints[end.owner].interfaces[link.plane].ifname))
        return out

    def set_link(self, a: str, b: str, up: bool, index: int | None = None) -> int:
        """Physically fail or restore the link a-b (both ends administratively down/up), as a cable pull
        would: the switches see carrier loss on their port. `index` picks one of parallel links.
        Returns the link's index in topo.links."""
        if index is None:
            index = self.topo.link_index(a, b)
        state = "up" if up else "down"
        for netns, ifname in self.link_ifnames(index):
            _ip_batch([f"link set {ifname} {state}"], netns)
        return index

    def _phase(self, name: str, t0: float) -> None:
        self.timings[name] = round(time.monotonic() - t0, 3)
        now = tree_cpu_s()
        self.cpu_timings[name] = round(now - self._cpu_mark, 2)
        self._cpu_mark = now

    # ---- lifecycle ----------------------------------------------------------------------------------
    def build(self) -> Fabric:
        self.run.save()
        log_dir = Path(self.run.log_dir)
        if not log_dir.is_dir():
            log_dir.parent.mkdir(parents=True, exist_ok=True)
        ensure_private_dir(log_dir)  # a caller's own directory: must be ours, not a symlink, closed to others
        self.socket_dir = socket_dir(log_dir)
        self.net = Mininet(topo=None, build=False, controller=None, host=EthlabHost, switch=self.opts.switch_cls,
                           link=Link, autoSetMacs=False, waitConnected=False)
        self._start_forkserver(log_dir)  # warms up while namespaces and links are made
        self._cpu_mark = tree_cpu_s()
        t0 = time.monotonic()
        hosts = self._start_hosts()
        attach_netns(hosts, self.run)
        self._phase("namespaces", t0)
        t0 = time.monotonic()
        nsw = len(self.topo.switches)
        ports = allocate_ports(nsw, self.opts.grpc_base_port)
        extra: list[dict[str, Any]] = [{} for _ in range(nsw)]
        if issubclass(self.opts.switch_cls, Bmv2Switch):  # BMv2 also listens on a Thrift port (queue rates)
            thrift = allocate_ports(nsw, self.opts.grpc_base_port + 1000, avoid=set(ports))
            extra = [{"thrift_port": t} for t in thrift]
            # BMv2 binds Thrift to every address and serves gRPC on TCP: root on this machine only (portguard)
            self.run.nft_table = table_name(self.run.run_id)
            self.run.save()
            guard_ports(self.run.nft_table, ports + thrift)
        if self.opts.switch_cls.unix_grpc:  # the controller reaches these over Unix sockets only root can open
            extra = [{**m, "grpc_address": f"unix:{self.socket_dir}/{n.name}.sock"}
                     for m, n in zip(extra, self.topo.switches, strict=True)]
        if self.forkserver is not None:
            extra = [{**m, "forkserver": self.forkserver} for m in extra]
        self._add_switch_nodes(ports, extra)
        self._phase("switch_nodes", t0)
        t0 = time.monotonic()
        self._add_links()
        self._phase("links", t0)
        t0 = time.monotonic()
        self._configure_hosts()
        self._phase("host_config", t0)
        self.net.built = True  # so a later net.start() does not run Mininet's own build/IP assignment
        return self

    def _add_switch_nodes(self, ports: list[int], extra: list[dict[str, Any]]) -> None:
        """One Mininet node per switch, made from a few threads (each starts and waits for a shell, as hosts
        do); the run state is saved once, with every shell's pid."""
        assert self.net is not None

        def make(item: tuple[Any, int, dict[str, Any]]) -> P4Switch:
            n, port, more = item
            assert n.device_id is not None
            return self.opts.switch_cls(
                n.name, device_id=n.device_id, grpc_port=port, **more, json_path=self.opts.json_path,
                log_dir=self.run.log_dir, cpu_port=self.opts.cpu_port, queue_rates_pps=self._queue_rates(n.name),
                queue_depth=self.opts.queue_depth, run=self.run, **self.opts.switch_params)

        try:
            with ThreadPoolExecutor(max_workers=8) as pool:
                switches = list(pool.map(make, zip(self.topo.switches, ports, extra, strict=True)))
        finally:
            self.run.save()
        for sw in switches:  # what Mininet.addSwitch would have recorded
            self.net.switches.append(sw)
            self.net.nameToNode[sw.name] = sw

    def _start_forkserver(self, log_dir: Path) -> None:
        if not (self.opts.fork_switches and issubclass(self.opts.switch_cls, P4ExecSwitch)):
            return
        preload = None
        if self.opts.preload_config:
            preload = log_dir / "pipeline.json"
            with open_new(preload, text=False) as f:
                f.write(self.opts.preload_config)
        with open_new(log_dir / "forkserver.out", text=False) as err:
            self.forkserver = ForkServer(preload, stderr=err, ready_timeout_s=self.opts.ready_timeout)
        self.run.add_pid("forkserver", self.forkserver.pid)
        self.run.save()

    def _start_hosts(self) -> list[EthlabHost]:
        """Start the host shells from a few threads: each start mostly waits for its shell's first prompt,
        so overlapping those waits is what makes 512 hosts quick. Pids are recorded as each shell exists."""
        assert self.net is not None

        def start(name: str) -> EthlabHost:
            host = EthlabHost(name, netns=self.netns(name))
            self.run.pids[f"host:{name}"] = [host.pid, proc_start_time(host.pid)]
            return host

        try:
            with ThreadPoolExecutor(max_workers=16) as pool:
                hosts = list(pool.map(start, [n.name for n in self.topo.hosts]))
        finally:
            self.run.save()
        for h in hosts:  # what Mininet.addHost would have recorded
            self.net.hosts.append(h)
            self.net.nameToNode[h.name] = h
        return hosts

    def _queue_rates(self, switch: str) -> dict[int, float]:
        if not self.opts.rate_scale:
            return {}
        bits = 8 * self.opts.mean_packet_bytes
        return {p: ln.rate_gbps * 1e9 * self.opts.rate_scale / bits for p, ln in self.topo.ports(switch).items()}

    def _add_links(self) -> None:
        assert self.net is not None
        root_names: list[str] = []
        plan = []
        for ln in self.topo.links:
            a, b = ln.a, ln.b
            if not self.topo.nodes[a.owner].is_switch:  # put the switch end first: created in the root ns
                a, b = b, a
            na, nb = self.topo.nodes[a.owner], self.topo.nodes[b.owner]
            assert na.device_id is not None
            name_a = switch_ifname(self.run, na.device_id, a.number)
            mac_a = switch_mac(na.device_id, a.number)
            if nb.is_switch:
                assert nb.device_id is not None
                name_b, mac_b = switch_ifname(self.run, nb.device_id, b.number), switch_mac(nb.device_id, b.number)
                root_names.append(name_b)
            else:
                itf = self.topo.endpoints[nb.name].interfaces[ln.plane]
                name_b, mac_b = itf.ifname, itf.mac
            root_names.append(name_a)
            plan.append((a, b, name_a, name_b, mac_a, mac_b))
        group = self.run.link_group = self.run.default_link_group()
        shared_group = _group_in_use(group)  # another run's (a hash collision): then bring ours up by name
        self.run.add_interfaces(root_names)  # recorded before they exist: a crash half-way stays cleanable
        batch = []
        for _a, b, name_a, name_b, mac_a, mac_b in plan:
            peer = (f" group {group}" if self.topo.nodes[b.owner].is_switch
                    else f" netns {self.host(b.owner).pid}")
            mtu = f" mtu {self.opts.link_mtu}" if self.opts.link_mtu else ""
            batch.append(f"link add name {name_a} address {mac_a}{mtu} group {group} type veth "
                         f"peer name {name_b} address {mac_b}{mtu}{peer}")
        _ip_batches(batch)
        for a, b, name_a, name_b, mac_a, mac_b in plan:  # Mininet bookkeeping only: no command per link
            self.net.addLink(a.owner, b.owner, port1=a.number, port2=b.number, intfName1=name_a, intfName2=name_b,
                             addr1=mac_a, addr2=mac_b, up=None, cls=PrecreatedLink)
        # Switch ports carry no IP traffic of their own: without an IPv6 link-local address (addrgenmode none,
        # set before they go up) they send no router solicitation, ND or MLD frame. One netlink message per
        # port, then one for the whole group, instead of a sysctl write and an `ip link set up` per port.
        ups = [f"link set {n} up" for n in root_names] if shared_group else [f"link set group {group} up"]
        _ip_batches([f"link set {n} addrgenmode none" for n in root_names])
        _ip_batch(ups)

    def _configure_hosts(self) -> None:
        """Per host: one `ip -batch` in its namespace: lo up, and per plane MAC/IP/up plus how the plane is
        reached (host_plane_lines). IPv6 off (no RS/MLD noise in the fabric) and TX checksum offload off (or
        frames that a user-space switch forwards would carry unfinished checksums to the receiver) are set from
        this process, by threads that join each namespace: no sysctl/ethtool process per host and interface."""
        cfg_dir = Path(self.run.log_dir)
        gateways = self._gateway_macs() if self.opts.switch_cls.routes_ipv4 else {}
        batches: dict[str, Path] = {}
        for ep in self.topo.endpoints.values():
            lines = ["link set lo up"]
            for plane, itf in sorted(ep.interfaces.items()):
                lines += host_plane_lines(itf, gateways.get((ep.host, plane)))
            batch = cfg_dir / f"host-{ep.host}.ip"  # in the private run directory: nobody else can write it
            with open_new(batch) as f:
                f.write("\n".join(lines) + "\n")
            batches[ep.host] = batch

        def settle(host: str) -> None:
            with entered(named(self.netns(host))):
                write_sysctl("net.ipv6.conf.all.disable_ipv6", "1")
                write_sysctl("net.ipv6.conf.default.disable_ipv6", "1")
                tx_checksum_off([itf.ifname for itf in self.topo.endpoints[host].interfaces.values()])

        with ThreadPoolExecutor(max_workers=8) as pool:
            futures = {host: pool.submit(settle, host) for host in batches}
        for host, future in futures.items():
            try:
                future.result()
            except OSError as err:
                raise RuntimeError(f"configuring host {host}: IPv6 and checksum offload: {err}") from None
        for host, batch in batches.items():
            self.host(host).sendCmd(f"ip -batch {batch}; echo el-rc=$?")  # all hosts at once, each in its shell
        for host in batches:
            out = self.host(host).waitOutput()
            if "el-rc=0" not in out:
                raise RuntimeError(f"configuring host {host}: {out.strip()}")

    def _gateway_macs(self) -> dict[tuple[str, int], str]:
        """(host, plane) -> MAC of the switch port that host's plane interface is cabled to."""
        out = {}
        for ln in self.topo.links:
            for near, far in ((ln.a, ln.b), (ln.b, ln.a)):
                node = self.topo.nodes[far.owner]
                if not self.topo.nodes[near.owner].is_switch and node.is_switch:
                    assert node.device_id is not None
                    out[(near.owner, ln.plane)] = switch_mac(node.device_id, far.number)
        return out

    def start(self) -> Fabric:
        """Start every switch process, then wait for all of them (they come up in parallel)."""
        assert self.net is not None
        self._cpu_mark = tree_cpu_s()
        t0 = time.monotonic()
        switches = [self.switch(n.name) for n in self.topo.switches]
        for sw in switches:
            sw.start([])
        deadline = time.monotonic() + self.opts.ready_timeout
        for sw in switches:
            if hasattr(sw, "wait_ready"):
                sw.wait_ready(max(1.0, deadline - time.monotonic()))
        self.started = True
        self._phase("switches", t0)
        return self

    def stop(self) -> CleanReport:
        """Stop switches and host shells, then remove every recorded namespace/interface/process.

        Every switch and shell is signalled first, so they all end in parallel. The interfaces go only after
        the switches have closed their sockets: the kernel walks every packet socket for each interface it
        unregisters, and deleting the link group under 48 running switches made teardown take 7.5 s, not 4.7."""
        t0 = mark = time.monotonic()

        def step(name: str) -> None:
            nonlocal mark
            now = time.monotonic()
            self.stop_timings[name] = round(now - mark, 3)
            mark = now

        if self.net is not None:
            for sw in self.net.switches:
                proc = getattr(sw, "proc", None)
                if proc is not None and proc.poll() is None:
                    proc.terminate()
            nodes = self.net.hosts + self.net.switches
            for node in nodes:  # interactive bash exits on a hang-up; Mininet's terminate() then reaps it
                if node.shell is not None and node.shell.poll() is None:
                    os.killpg(node.shell.pid, signal.SIGHUP)
            deadline = time.monotonic() + 5.0
            for sw in self.net.switches:
                if hasattr(sw, "stop_process"):
                    sw.stop_process(timeout=max(0.1, deadline - time.monotonic()))
                else:
                    sw.stop(deleteIntfs=False)
            step("switches")
            for node in nodes:
                node.terminate()
            step("shells")
        self.net = None
        if self.forkserver is not None:
            self.forkserver.close()  # stops any switch it forked that is still running
            self.forkserver = None
            step("forkserver")
        report = clean_run(self.run)
        if self.socket_dir is not None and Path(self.run.log_dir) not in self.socket_dir.parents:
            shutil.rmtree(self.socket_dir, ignore_errors=True)  # a /tmp one (long run path): nothing keeps it
        self.socket_dir = None
        self.stop_timings.update(report.timings)
        self._phase("stop", t0)
        return report

    def __enter__(self) -> Fabric:
        try:
            return self.build()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()


# The next hop every host names on every plane: link-local, so it is no host's address in any plane
# (10.<plane>.x.y); each interface has its own neighbour entry for it, with its own switch port's MAC.
GATEWAY_IPV4 = "169.254.0.1"


def host_plane_lines(itf: Interface, gateway_mac: str | None) -> list[str]:
    """`ip -batch` lines that bring one plane interface up. With a gateway (a routing switch port): the
    plane's prefix goes via GATEWAY_IPV4 with a permanent neighbour entry for it (one per interface, where
    an entry per peer made a million for upn's 512 x 4), so the kernel never ARPs and the switch writes the
    destination MAC of the last hop. Without one (a bridge): the prefix is on-link and peers are ARPed for."""
    up = f"link set {itf.ifname} up"
    if gateway_mac is None:
        return [up, f"addr add {itf.cidr} dev {itf.ifname}"]
    subnet = ipaddress.ip_interface(itf.cidr).network
    return [up, f"addr add {itf.cidr} dev {itf.ifname} noprefixroute",
            f"neigh replace {GATEWAY_IPV4} lladdr {gateway_mac} dev {itf.ifname} nud permanent",
            f"route replace {subnet} via {GATEWAY_IPV4} dev {itf.ifname} onlink"]


def _group_in_use(group: int) -> bool:
    r = subprocess.run(["ip", "-o", "link", "show", "group", str(group)], capture_output=True, text=True)
    return r.returncode != 0 or bool(r.stdout.strip())


def _ip_batches(lines: list[str], parts: int = 8) -> None:
    """Independent lines through a few `ip -batch` processes at once: the kernel serialises much of the work,
    but on a machine that others load too, one process gets a small share of the CPU."""
    if len(lines) < 64 * parts:
        _ip_batch(lines)
        return
    step = -(-len(lines) // parts)
    chunks = [lines[i:i + step] for i in range(0, len(lines), step)]
    with ThreadPoolExecutor(max_workers=len(chunks)) as pool:
        list(pool.map(_ip_batch, chunks))


def _ip_batch(lines: list[str], netns: str | None = None) -> None:
    if not lines:
        return
    cmd = ["ip"] + (["-n", netns] if netns else []) + ["-batch", "-"]
    r = subprocess.run(cmd, input="\n".join(lines) + "\n", capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"ip -batch failed: {r.stderr.strip()}")
