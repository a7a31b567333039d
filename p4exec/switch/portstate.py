"""How the data plane follows its ports' links: carrier up/down, interfaces that vanish and come back.

Events come from rtnetlink (LinkMonitor), from EPOLLERR on a port socket, and from a periodic sysfs check
as a fallback. A link going down flushes the port's queue (those packets are dropped as port_down), tells
the program (`Live.set_port_up`, the liveness register) and the P4Runtime server's port listeners.
A mixin of `DataPlane`: it runs on the loop thread and uses the loop's ports, epoll set and accounting.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from p4exec.switch.ports import SocketPort, link_state

if TYPE_CHECKING:
    import select

    from p4exec.switch.linkmon import LinkMonitor
    from p4exec.switch.program import Live
    from p4exec.switch.stats import Accounting
    from p4exec.switch.tm import TrafficManager

log = logging.getLogger("p4exec.switch")


class PortStateMixin:
    ports: dict[int, SocketPort]
    gone: set[int]
    live: Live | None
    tm: TrafficManager
    acct: Accounting
    flush: Callable[[int], int]  # the switch loop's (loop.SwitchLoop.flush)
    port_changed: Callable[[int], None]  # the switch loop's (loop.SwitchLoop.port_changed)
    port_listeners: list[Callable[[int, bool], None]]
    _linkmon: LinkMonitor | None
    _fd_port: dict[int, SocketPort]
    _ep: select.epoll

    def _register(self, port: SocketPort) -> None:
        raise NotImplementedError

    def _check_links(self) -> None:
        for num, port in self.ports.items():
            state = link_state(port.iface)
            if num in self.gone:
                if state != "gone":
                    self._port_back(port)
                continue
            if state == "gone":
                self._port_gone(port, "interface disappeared")
            elif (state == "up") != port.up:
                self._set_up(port, state == "up")

    def _link_events(self) -> None:
        """Apply rtnetlink link events to our ports (by ifindex; vanished ports by name)."""
        events = self._linkmon.read() if self._linkmon is not None else []
        by_index = {p.ifindex: p for n, p in self.ports.items() if n not in self.gone and p.ifindex}
        for ev in events:
            port = by_index.get(ev.ifindex)
            if port is not None:
                if ev.deleted:
                    self._port_gone(port, "interface disappeared")
                elif ev.up != port.up:
                    self._set_up(port, ev.up)
            elif not ev.deleted and self.gone:
                for num in list(self.gone):
                    if self.ports[num].iface == ev.name:
                        self._port_back(self.ports[num])

    def _port_error(self, port: SocketPort) -> None:
        """EPOLLERR on a port socket: the interface went down or away (the error is cleared here)."""
        err = port.take_error()
        state = link_state(port.iface)
        if state == "gone":
            self._port_gone(port, f"interface disappeared ({os.strerror(err) if err else 'socket error'})")
        elif state == "down" and port.up:
            self._set_up(port, False)

    def _set_up(self, port: SocketPort, up: bool) -> None:
        port.up = up
        self.port_changed(port.num)
        log.warning("port %d (%s): link %s", port.num, port.iface, "up" if up else "down")
        if not up:
            self._flush_queue(port.num)
        if self.live is not None:
            self.live.set_port_up(port.num, up)
        for fn in self.port_listeners:
            try:
                fn(port.num, up)
            except Exception:  # noqa: BLE001
                log.exception("port listener failed")

    def _port_gone(self, port: SocketPort, why: str) -> None:
        if port.num in self.gone:
            return
        log.error("port %d (%s): %s; dropping the port", port.num, port.iface, why)
        fd = port.fileno()
        if fd >= 0:
            self._fd_port.pop(fd, None)
            try:
                self._ep.unregister(fd)
            except OSError:
                pass
        port.close()
        self.gone.add(port.num)
        self._set_up(port, False)

    def _port_back(self, port: SocketPort) -> None:
        try:
            port.open()
        except OSError:
            return
        self.gone.discard(port.num)
        self._register(port)
        log.warning("port %d (%s): interface is back", port.num, port.iface)
        self._set_up(port, port.up)

    def _flush_queue(self, num: int) -> None:
        self.flush(num)

