"""The emulated switch's data plane: AF_PACKET ports and the real-time side of the switch loop.

The data path itself (ingress → traffic manager → egress → ports out, drop reasons) is the shared
`SwitchLoop` (loop.py), which vfabric's simulated switch runs too; this module adds what is real-time and
I/O: the sockets, epoll, the timers on the monotonic clock, per-port accounting and pcap.

One thread (the process's main thread) runs everything that touches packets, driven by
epoll over the port sockets and an eventfd that other threads (P4Runtime server) use to
hand it work (`call`). Keeping packets on one thread means no locks per packet.
"""

from __future__ import annotations

import gc
import logging
import os
import select
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from heapq import heappop, heappush
from itertools import count
from pathlib import Path
from typing import Any

from p4exec.switch.linkmon import LinkMonitor
from p4exec.switch.loop import SwitchLoop
from p4exec.switch.pcap import PcapWriter
from p4exec.switch.ports import PortGone, SocketPort, burst_sender
from p4exec.switch.portstate import PortStateMixin
from p4exec.switch.program import Live
from p4exec.switch.stats import TX_ERROR, Accounting, Fate, PortStats
from p4exec.switch.tm import TrafficManager

UNKNOWN_RATE_BPS = 1e9  # an unpaced port (no --queue-rate-port) times PFC quanta at this rate

log = logging.getLogger("p4exec.switch")

RX_BATCH = 64
ERR_EVENTS = select.EPOLLERR | select.EPOLLHUP
TICK_S = 0.5  # pcap flushes; sysfs link check every LINK_TICKS ticks (netlink tells us sooner)
LINK_TICKS_NETLINK = 10
LINK_TICKS_POLL = 1
CALL_POLL_S = 0.2  # how often a waiting `call` checks that the loop still runs


class PortsUp:
    """The switch loop's view of which ports are up, read from the ports themselves."""

    __slots__ = ("ports",)

    def __init__(self, ports: dict[int, SocketPort]) -> None:
        self.ports = ports

    def get(self, port: int, default: Any = None) -> bool | None:
        p = self.ports.get(port)
        return default if p is None else p.up


class PortSender:
    """A port out for the switch loop: the socket, its transmit counters and its pcap (the start time is
    the wall clock's own).

    The batch path's common case (one copy, one frame, a port that is up) is queued (`queue`) and leaves with
    the port's other frames of the turn in one system call (`flush`, when the batch ends); its counters are
    taken then, from what the kernel took. A lone `send` first flushes what is queued, so the wire keeps the
    order in which the switch loop sent."""

    __slots__ = ("port", "acct", "pcap", "frames", "ctxs")

    def __init__(self, port: SocketPort, acct: Accounting, pcap: PcapWriter | None) -> None:
        self.port = port
        self.acct = acct
        self.pcap = pcap
        self.frames: list[bytes] = []  # queued, in order
        self.ctxs: list[PortStats] = []  # the ingress port's stats of each queued frame

    def flush(self) -> None:
        """Send what is queued: each frame the kernel takes is transmitted here and forwarded for its ingress
        port, each it refuses a tx_error drop there (as `DataPlane._forward_one` counts a lone send)."""
        frames, ctxs = self.frames, self.ctxs
        if not frames:
            return
        self.frames, self.ctxs = [], []
        refused = self.port.send_burst(frames)
        if refused:
            bad = set(refused)
            for i in refused:
                ctxs[i].dropped[TX_ERROR] += 1
            frames = [f for i, f in enumerate(frames) if i not in bad]
            ctxs = [c for i, c in enumerate(ctxs) if i not in bad]
            if not frames:
                return
        num = self.port.num
        ps = self.acct.ports.get(num) or self.acct.port(num)
        ps.transmitted += len(frames)
        ps.transmitted_bytes += sum(map(len, frames))
        for ctx in ctxs:
            ctx.forwarded += 1
        if self.pcap is not None:
            for frame in frames:
                self.pcap.write(frame)

    def send(self, frame: bytes, start_ns: float) -> bool:
        if self.frames:
            self.flush()
        if not self.port.send(frame):
            return False
        num = self.port.num
        ps = self.acct.ports.get(num) or self.acct.port(num)
        ps.transmitted += 1
        ps.transmitted_bytes += len(frame)
        if self.pcap is not None:
            self.pcap.write(frame)
        return True


class DataPlane(PortStateMixin, SwitchLoop):
    """Ports, queues and the loop; the program is swapped in by `commit` (on the loop thread)."""

    def __init__(self, ports: list[SocketPort], tm: TrafficManager, cpu_port: int | None, pcap_dir: str | None) -> None:
        self.ports: dict[int, SocketPort] = {p.num: p for p in ports}
        self.acct = Accounting()
        self._senders: dict[int, PortSender] = {}
        self._queued: list[PortSender] = []  # senders with frames queued in this batch
        SwitchLoop.__init__(self, tm, self, cpu_port, self._senders, PortsUp(self.ports))
        # the per-copy hooks are the accounting's own methods: no Python frame of ours per packet (hot path)
        self._copies = self.acct.start  # type: ignore[method-assign]
        self._copy_done = self.acct.copy_done  # type: ignore[method-assign]
        self._timers: list[tuple[int, int, Callable[..., Any], tuple]] = []
        self._timer_seq = count()
        self.packet_in_listeners: list[Callable[[bytes], None]] = []
        self.port_listeners: list[Callable[[int, bool], None]] = []
        self.gone: set[int] = set()
        self._stop = False
        self._wake_fd = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
        self._calls: deque = deque()
        self._loop_thread: int | None = None
        self._ep = select.epoll()
        self._fd_port: dict[int, SocketPort] = {}
        self._pcap_in: dict[int, PcapWriter] = {}
        self._pcap_out: dict[int, PcapWriter] = {}
        self._err_logged = 0
        self._linkmon: LinkMonitor | None = None
        if pcap_dir is not None:
            Path(pcap_dir).mkdir(parents=True, exist_ok=True)
            for p in ports:
                self._pcap_in[p.num] = PcapWriter(Path(pcap_dir) / f"{p.iface}_in.pcap")
                self._pcap_out[p.num] = PcapWriter(Path(pcap_dir) / f"{p.iface}_out.pcap")
        for p in ports:
            self._senders[p.num] = PortSender(p, self.acct, self._pcap_out.get(p.num))

    # ------------------------------------------------------------------ set-up and control

    def open_ports(self) -> None:
        log.info("bursts out: %s", "sendmmsg (C)" if burst_sender() is not None else "frame by frame (Python)")
        for port in self.ports.values():
            try:
                port.open()
            except OSError as exc:
                log.error("port %d (%s): cannot open: %s; dropping it until it appears", port.num, port.iface, exc)
                port.up = False
                self.gone.add(port.num)
                continue
            self._register(port)
            log.info("port %d: %s (%s)", port.num, port.iface, "up" if port.up else "down")
        self._ep.register(self._wake_fd, select.EPOLLIN)
        try:
            self._linkmon = LinkMonitor()
            self._ep.register(self._linkmon.fileno(), select.EPOLLIN)
        except OSError as exc:
            log.warning("no rtnetlink link events (%s): polling sysfs instead", exc)
            self._linkmon = None

    def _register(self, port: SocketPort) -> None:
        fd = port.fileno()
        self._fd_port[fd] = port
        self._ep.register(fd, select.EPOLLIN)

    def now_us(self) -> int:
        return self.tm.now_us()

    def call(self, fn: Callable[[], Any], timeout: float | None = 5.0) -> Any:
        """Run `fn` on the data-plane thread (directly if the loop is not running) and return its result.

        `timeout` None waits as long as `fn` takes. If the loop ends before it took the job, the job
        runs on the caller's thread (nothing else touches the packets any more)."""
        if self._loop_thread is None or self._loop_thread == threading.get_ident():
            return fn()
        done = threading.Event()
        box: list = [None, None]

        def job() -> None:
            try:
                box[0] = fn()
            except BaseException as exc:  # noqa: BLE001 - handed back to the caller
                box[1] = exc
            finally:
                done.set()

        self._calls.append(job)
        os.eventfd_write(self._wake_fd, 1)
        deadline = None if timeout is None else time.monotonic() + timeout
        while not done.wait(CALL_POLL_S):
            if self._loop_thread is None:
                try:
                    self._calls.remove(job)
                except ValueError:
                    continue  # the loop's last drain took it: it finishes there
                job()
                break
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError("switch data plane did not answer")
        if box[1] is not None:
            raise box[1]
        return box[0]

    def post(self, fn: Callable[[], None]) -> None:
        """Queue `fn` for the data-plane thread without waiting (packet-out)."""
        self._calls.append(fn)
        os.eventfd_write(self._wake_fd, 1)

    def commit(self, live: Live) -> None:
        for num, port in self.ports.items():
            live.set_port_up(num, port.up)
        self.set_live(live)

    def now_ns(self) -> int:
        """The clock of the switch loop's timers (the link layer reads it)."""
        return self.tm.clock.now_ns()

    def enable_link_layer(self, config: Any, name: str, seed: int, ports: list[int] | None = None) -> None:
        """The link layer (linklayer/port.py) on every port (or on `ports`): it sends for the port and sees every
        frame the port reads before ingress does. Link errors are keyed by `name:port`, as vfabric keys them."""
        import hashlib

        from linklayer import LinkPort

        macs: dict[int, bytes] = {}
        for num, sender in list(self._senders.items()):
            if ports is not None and num not in ports:
                continue
            mac = macs[num] = b"\x02" + hashlib.blake2b(f"{name}:{num}".encode(), digest_size=5).digest()
            lp = LinkPort(config, self, sender, f"{name}:{num}", seed, mac=mac)
            self._senders[num] = lp  # type: ignore[assignment]
            self.attach_link(num, lp)
        if config.flow_control != "none":  # PFC/CBFC: pause frames go out through the port (and its pcap)
            self.use_flow_control(config)
            for num, lp in sorted(self.link_ports.items()):
                cfg = self.tm.port(num).config
                rate = cfg.rate_bps or cfg.rate_pps * 12_000 or UNKNOWN_RATE_BPS
                self.attach_flow(num, lp, rate, macs[num])
        self._ingress = self._ingress_link  # type: ignore[method-assign]

    def _ingress_link(self, num: int, frame: bytes) -> None:
        """`_ingress` behind the port's link layer: what it consumes (bad FCS, LLR control and repeats, flow
        control) is counted there, not as received. The port's in capture sees the frame as it came off the
        wire (shim, pauses, credit updates, frames failing their FCS), as its out capture sees what left."""
        if self._pcap_in:
            w = self._pcap_in.get(num)
            if w is not None:
                w.write(frame)
        lp = self.link_ports.get(num)
        if lp is not None:
            got = lp.receive(frame)
            if got is None:
                return
            frame = got
        self.ingress(num, frame, self.acct.received(num, len(frame)))

    def at(self, t_ns: int, fn: Callable[..., Any], *args: Any) -> None:
        """The switch loop's timer: `fn(*args)` once the monotonic clock reaches `t_ns` (run by the loop)."""
        heappush(self._timers, (t_ns, next(self._timer_seq), fn, args))

    def stop(self) -> None:
        """Ask the loop to end; safe from signal handlers and other threads."""
        self._stop = True
        try:
            os.eventfd_write(self._wake_fd, 1)
        except OSError:
            pass

    def inject(self, port: int, frame: bytes) -> None:
        """A frame entering ingress on `port` (packet-out on the CPU port), on the loop thread."""
        self._ingress(port, frame)
        self._run_timers()

    # ------------------------------------------------------------------ the loop

    def run(self) -> None:
        self._loop_thread = threading.get_ident()
        ep = self._ep
        wake_fd = self._wake_fd
        fd_port = self._fd_port
        link_fd = self._linkmon.fileno() if self._linkmon is not None else -1
        link_ticks = LINK_TICKS_NETLINK if self._linkmon is not None else LINK_TICKS_POLL
        next_tick = time.monotonic() + TICK_S
        ticks = 0
        deadline: float | None = None
        try:
            while not self._stop:
                now = time.monotonic()
                timeout = next_tick - now if deadline is None else min(deadline, next_tick) - now
                events = ep.poll(max(0.0, timeout))
                now = time.monotonic()
                for fd, ev in events:
                    if fd == wake_fd:
                        try:
                            os.eventfd_read(wake_fd)
                        except BlockingIOError:
                            pass
                        self._run_calls()
                        continue
                    if fd == link_fd:
                        self._guarded(self._link_events)
                        continue
                    port = fd_port.get(fd)
                    if port is None:
                        continue
                    if ev & ERR_EVENTS:
                        self._port_error(port)
                        if port.num in self.gone:
                            continue
                    try:
                        frames = port.recv_batch(RX_BATCH)
                    except (PortGone, OSError) as exc:
                        self._port_gone(port, str(exc))
                        continue
                    if not frames:  # a wake-up for a frame the kernel dropped at a full ring (overload)
                        continue
                    num = port.num
                    if len(frames) == 1 or num in self.link_ports:  # its link layer takes each frame first
                        for frame in frames:
                            self._ingress(num, frame)
                    else:   # the burst in one hand-off (the native pipeline takes it in a few calls into C)
                        ps = self._received_burst(num, frames)
                        self.ingress_batch([(num, frame, ps) for frame in frames])
                deadline = self._run_timers()
                if now >= next_tick:
                    ticks += 1
                    if ticks % link_ticks == 0:
                        self._guarded(self._check_links)
                    self._guarded(self._flush_pcaps)
                    self._guarded(self.collect_ring_drops)
                    # Everything alive for a tick (program, tables, sockets) is long-lived: move it out of
                    # the collector's view so a full collection scans only recent objects. Measured: full
                    # collections of an ETH+ switch with its tables took 30-50 ms (≈1.5k packets at 30k/s).
                    gc.freeze()
                    next_tick = now + TICK_S
        finally:
            self._loop_thread = None
            self._run_calls()

    def collect_ring_drops(self) -> None:
        """Count what the kernel lost in the ports' receive rings (received, dropped as rx_ring)."""
        for num, port in self.ports.items():
            drops = port.take_drops()
            if drops:
                self.acct.ring_dropped(num, drops)

    def stats_snapshot(self) -> dict:
        """The accounting with the ring drops up to now (on the loop thread), and the link layer's counters
        per port when it is on."""
        self.collect_ring_drops()
        snap = self.acct.snapshot()
        if self.flow:
            self.flow_stats()  # open pauses and credit stalls counted up to now, into the ports' counters
        if self.link_ports:
            snap["link_layer"] = {str(n): lp.counters.as_dict() for n, lp in sorted(self.link_ports.items())}
        return snap

    def _guarded(self, fn: Callable[[], None]) -> None:
        """Housekeeping must never stop the packet loop: log its failures and carry on."""
        try:
            fn()
        except Exception:  # noqa: BLE001
            log.exception("switch housekeeping (%s) failed", getattr(fn, "__name__", fn))

    def _run_calls(self) -> None:
        calls = self._calls
        while calls:
            fn = calls.popleft()
            try:
                fn()
            except Exception:  # noqa: BLE001 - a bad control request must not stop the switch
                log.exception("control request failed")

    # ------------------------------------------------------------------ per packet

    def _ingress(self, num: int, frame: bytes) -> None:
        self.ingress(num, frame, self._received(num, frame))

    def _received(self, num: int, frame: bytes) -> PortStats:
        """Count (and capture) a frame received on port `num`: its per-port stats, the switch loop's ctx."""
        ps = self.acct.received(num, len(frame))
        if self._pcap_in:
            w = self._pcap_in.get(num)
            if w is not None:
                w.write(frame)
        return ps

    def _received_burst(self, num: int, frames: list[bytes]) -> PortStats:
        """`_received` for a burst of one port in one go (the per-port stats are the ctx of every frame)."""
        ps = self.acct.port(num)
        ps.received += len(frames)
        ps.received_bytes += sum(map(len, frames))
        w = self._pcap_in.get(num) if self._pcap_in else None
        if w is not None:
            for frame in frames:
                w.write(frame)
        return ps

    def _forward_one(self, ctx: PortStats, port: int, frame: bytes, start: float) -> None:
        """`SwitchLoop._forward_one` with the accounting of `_copies`/`_send_out`/`_copy_done` done in place: one
        copy that leaves on a data port makes its packet forwarded, one the kernel refuses a tx_error drop (a
        packet never in flight here, so `in_flight` does not move). On a plain port (no link layer) the frame
        is queued and counted when the batch's burst goes out (`ingress_batch`)."""
        sender = self._senders.get(port)
        if sender is None or port == self.cpu_port or not self.up_state.get(port):
            SwitchLoop._forward_one(self, ctx, port, frame, start)
        elif type(sender) is PortSender:
            if not sender.frames:
                self._queued.append(sender)
            sender.frames.append(frame)
            sender.ctxs.append(ctx)
        elif sender.send(frame, start):
            ctx.forwarded += 1
        else:
            ctx.dropped[TX_ERROR] += 1

    def ingress(self, port: int, frame: bytes, ctx: Any) -> None:
        """`SwitchLoop.ingress`, then what it queued goes out: a lone frame also runs through the batch entry
        (`run_one`), whose one-copy frames wait in `_queued` like a batch's."""
        try:
            SwitchLoop.ingress(self, port, frame, ctx)
        finally:
            if self._queued:
                self.flush_out()

    def ingress_batch(self, items: list[tuple[int, bytes, Any]]) -> None:
        """`SwitchLoop.ingress_batch`, then the batch's queued frames out, one burst per port: when it returns,
        every frame is on the wire (or counted as refused), so counters read between turns are complete."""
        try:
            SwitchLoop.ingress_batch(self, items)
        finally:
            self.flush_out()

    def flush_out(self) -> None:
        """Send every port's queued frames."""
        queued = self._queued
        while queued:
            queued.pop().flush()

    def _run_timers(self) -> float | None:
        """Run the switch loop's timers that are due; the time.monotonic() of the next one (None: none).
        The traffic manager runs on the monotonic clock, so its ns deadlines convert."""
        timers = self._timers
        now_ns = self.tm.clock.now_ns
        while timers and timers[0][0] <= now_ns():
            _t, _seq, fn, args = heappop(timers)
            fn(*args)
        return timers[0][0] / 1e9 if timers else None

    # ------------------------------------------------------------------ the switch loop's hooks: per-port accounting

    def _lost(self, ctx: PortStats, reason: str) -> None:
        ctx.dropped[reason] += 1

    def _dropped(self, fate: Fate, reason: str) -> None:
        fate.reason = reason

    def _packet_in(self, data: bytes) -> None:
        if self.cpu_port is not None:
            ps = self.acct.ports.get(self.cpu_port) or self.acct.port(self.cpu_port)
            ps.transmitted += 1
            ps.transmitted_bytes += len(data)
        for fn in self.packet_in_listeners:
            try:
                fn(data)
            except Exception:  # noqa: BLE001
                log.exception("packet-in listener failed")

    def _bad_packet(self, where: str, port: int, exc: Exception) -> None:
        self._err_logged += 1
        if self._err_logged <= 20 or log.isEnabledFor(logging.DEBUG):
            log.warning("%s on port %d: packet dropped: %s: %s", where, port, type(exc).__name__, exc)

    def _flush_pcaps(self) -> None:
        for w in self._pcap_in.values():
            w.flush()
        for w in self._pcap_out.values():
            w.flush()

    # ------------------------------------------------------------------ shutdown

    def close(self) -> None:
        for num in list(self.tm.ports):
            self._flush_queue(num)
        self._guarded(self.collect_ring_drops)
        close_ports(list(self.ports.values()))
        for w in list(self._pcap_in.values()) + list(self._pcap_out.values()):
            w.close()
        if self._linkmon is not None:
            self._linkmon.close()
        try:
            self._ep.close()
            os.close(self._wake_fd)
        except OSError:
            pass


CLOSE_THREADS = 16


def close_ports(ports: list[SocketPort]) -> None:
    """Close the ports from a few threads. The kernel ends each AF_PACKET socket with an RCU grace period
    (~10-15 ms): one after another, a 128-port switch took 1.8 s to close them; closes in flight together
    share their grace periods (0.1 s), and a fabric's teardown waits for its slowest switch."""
    if len(ports) <= 1:
        for port in ports:
            port.close()
        return
    with ThreadPoolExecutor(max_workers=min(CLOSE_THREADS, len(ports))) as pool:
        list(pool.map(SocketPort.close, ports))
