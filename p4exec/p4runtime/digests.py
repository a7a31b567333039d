"""Batches digest() data into DigestList messages (P4Runtime spec, "DigestEntry"/"DigestList").

A list is sent when it holds `max_list_size` items (0: no limit) or when its
oldest item is `max_timeout_ns` old (0: at once). Data already waiting, or sent
in a list that is neither acknowledged nor past `ack_timeout_ns`, is not sent again.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from p4.v1 import p4data_pb2, p4runtime_pb2

from p4exec.p4runtime.codec import encode


def to_p4data(values, shape: str = "struct") -> p4data_pb2.P4Data:
    """A digest's data as its P4Info type_spec says: a single bitstring, or the members (bitstrings) of a struct
    or, for `shape` "tuple" (the digest of a list expression, which p4c types as a tuple), of a tuple. That is
    what BMv2's P4Runtime server (PI) sends: P4Data.struct for a struct type_spec, P4Data.tuple for a tuple one."""
    if isinstance(values, int):
        return p4data_pb2.P4Data(bitstring=encode(values))
    if shape == "bitstring" and len(values) == 1:
        return p4data_pb2.P4Data(bitstring=encode(values[0]))
    data = p4data_pb2.P4Data()
    members = data.tuple.members if shape == "tuple" else data.struct.members
    for v in values:
        members.append(to_p4data(v))
    return data


def digest_shapes(p4info) -> dict[int, str]:
    """Digest id -> which P4Data its data takes ("struct", "tuple" or "bitstring"), from its type_spec."""
    return {d.preamble.id: d.type_spec.WhichOneof("type_spec") or "struct" for d in p4info.digests}


@dataclass
class _Pending:
    items: list[p4data_pb2.P4Data] = field(default_factory=list)
    keys: set[bytes] = field(default_factory=set)
    first_ns: int = 0


@dataclass
class _Unacked:
    digest_id: int
    keys: set[bytes]
    deadline_ns: int


class DigestEngine:
    """Collects digests per digest id and hands finished lists to `send`."""

    def __init__(self, send: Callable[[p4runtime_pb2.DigestList], None]) -> None:
        self._send = send
        self._lock = threading.Lock()
        self._configs: dict[int, p4runtime_pb2.DigestEntry.Config] = {}
        self._shapes: dict[int, str] = {}
        self._pending: dict[int, _Pending] = {}
        self._unacked: dict[tuple[int, int], _Unacked] = {}
        self._list_ids = itertools.count(1)

    def configure(self, configs: dict[int, p4runtime_pb2.DigestEntry.Config],
                  shapes: dict[int, str] | None = None) -> None:
        """Use the current configs (the store's dict, shared); unconfigured digests are dropped. `shapes`: each
        digest's P4Data kind (digest_shapes of the live P4Info); a digest not in it is sent as a struct."""
        with self._lock:
            self._configs = configs
            if shapes is not None:
                self._shapes = shapes
            for did in [d for d in self._pending if d not in configs]:
                del self._pending[did]

    def busy(self) -> bool:
        """Whether timing matters now: a digest is configured, or lists wait to be sent or acked."""
        return bool(self._configs or self._pending or self._unacked)

    def reset(self) -> None:
        with self._lock:
            self._configs = {}
            self._pending.clear()
            self._unacked.clear()

    def add(self, digest_id: int, values) -> None:
        now = time.monotonic_ns()
        data = to_p4data(values, self._shapes.get(digest_id, "struct"))
        key = data.SerializeToString(deterministic=True)
        out = []
        with self._lock:
            cfg = self._configs.get(digest_id)
            if cfg is None:
                return
            self._expire(now)
            if any(u.digest_id == digest_id and key in u.keys for u in self._unacked.values()):
                return
            pend = self._pending.setdefault(digest_id, _Pending())
            if key in pend.keys:
                return
            if not pend.items:
                pend.first_ns = now
            pend.items.append(data)
            pend.keys.add(key)
            if cfg.max_timeout_ns == 0 or (cfg.max_list_size and len(pend.items) >= cfg.max_list_size):
                out.append(self._finish(digest_id, cfg, now))
        for msg in out:
            self._send(msg)

    def ack(self, digest_id: int, list_id: int) -> None:
        with self._lock:
            self._unacked.pop((digest_id, list_id), None)

    def tick(self) -> None:
        """Send lists whose timeout passed; called periodically by the server."""
        now = time.monotonic_ns()
        out = []
        with self._lock:
            self._expire(now)
            for did, pend in list(self._pending.items()):
                cfg = self._configs.get(did)
                if cfg is not None and pend.items and now - pend.first_ns >= cfg.max_timeout_ns:
                    out.append(self._finish(did, cfg, now))
        for msg in out:
            self._send(msg)

    def _expire(self, now: int) -> None:
        for k in [k for k, u in self._unacked.items() if u.deadline_ns <= now]:
            del self._unacked[k]

    def _finish(self, digest_id: int, cfg, now: int) -> p4runtime_pb2.DigestList:
        pend = self._pending.pop(digest_id)
        list_id = next(self._list_ids)
        if cfg.ack_timeout_ns:
            self._unacked[digest_id, list_id] = _Unacked(digest_id, pend.keys, now + cfg.ack_timeout_ns)
        msg = p4runtime_pb2.DigestList(digest_id=digest_id, list_id=list_id, timestamp=time.time_ns())
        msg.data.extend(pend.items)
        return msg
