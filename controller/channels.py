"""One gRPC channel per server address, shared by every session with a device behind that address.

An in-process fabric serves all its switches from one P4Runtime server (p4exec.p4runtime.server.shared); a
channel per switch meant a channel polling thread per switch, each waking several times a second. Sessions
take the address's channel here and give it back when they close; the last one closes it. A switch process
of its own (BMv2, `p4exec switch`) has an address of its own, so its session still has a channel of its own.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import grpc


@dataclass
class _Held:
    channel: grpc.Channel
    users: int


class ChannelPool:
    """Reference-counted channels by (address, options)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[tuple[str, tuple], _Held] = {}

    def take(self, address: str, options: Sequence[tuple[str, object]]) -> grpc.Channel:
        key = (address, tuple(options))
        with self._lock:
            held = self._held.get(key)
            if held is None:
                held = self._held[key] = _Held(grpc.insecure_channel(address, options=list(options)), 0)
            held.users += 1
            return held.channel

    def give_back(self, channel: grpc.Channel) -> None:
        """The last user's give-back closes the channel (and every call still on it)."""
        with self._lock:
            for key, held in self._held.items():
                if held.channel is channel:
                    held.users -= 1
                    if held.users > 0:
                        return
                    del self._held[key]
                    break
            else:
                return
        channel.close()

    def users(self, address: str) -> int:
        with self._lock:
            return sum(h.users for (a, _o), h in self._held.items() if a == address)


CHANNELS = ChannelPool()  # the process's pool: every SwitchConnection takes its channel here
