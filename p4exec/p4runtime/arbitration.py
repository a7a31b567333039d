"""Client arbitration per (device_id, role) with election ids (P4Runtime spec, "Client Arbitration").

The primary of a (device, role) is the connected client whose election id equals
the highest election id the server has seen for it. When a client becomes or stays
primary, or the primary steps down or leaves, every client of that (device, role)
hears about it; a backup that stays a backup gets the only answer. Clients
without an election id are backups.
"""

from __future__ import annotations

import itertools
import queue
import threading
from dataclasses import dataclass, field

from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2

from p4exec.p4runtime.errors import P4RuntimeError

_SESSION_IDS = itertools.count(1)


def election_int(eid: p4runtime_pb2.Uint128) -> int:
    return (eid.high << 64) | eid.low


@dataclass(eq=False)
class Session:
    """One StreamChannel: its identity after arbitration and its outgoing queue."""

    out: queue.Queue = field(default_factory=lambda: queue.Queue(maxsize=4096))
    device_id: int | None = None
    role: str | None = None
    election_id: int | None = None
    ident: int = field(default_factory=lambda: next(_SESSION_IDS))

    def send(self, msg: p4runtime_pb2.StreamMessageResponse) -> None:
        """Queue a message; a client that stops reading loses messages, not the switch."""
        try:
            self.out.put_nowait(msg)
        except queue.Full:
            pass

    def close(self) -> None:
        """Wake the stream's writer to end it (never blocks, even if the queue is full)."""
        while True:
            try:
                self.out.put_nowait(None)
                return
            except queue.Full:
                try:
                    self.out.get_nowait()
                except queue.Empty:
                    pass

    @property
    def key(self) -> tuple[int, str] | None:
        return None if self.device_id is None else (self.device_id, self.role or "")


@dataclass
class _Group:
    sessions: list[Session] = field(default_factory=list)
    highest: int | None = None

    def primary(self) -> Session | None:
        if self.highest is None:
            return None
        for s in self.sessions:
            if s.election_id == self.highest:
                return s
        return None


class Arbitrator:
    """Tracks the clients of every (device_id, role) and who is primary."""

    def __init__(self, device_ids: set[int] | None = None) -> None:
        self._lock = threading.Lock()
        self._groups: dict[tuple[int, str], _Group] = {}
        self.device_ids = device_ids

    def arbitrate(self, session: Session, update: p4runtime_pb2.MasterArbitrationUpdate) -> None:
        """Apply an arbitration update from `session`; raise to close the stream."""
        if self.device_ids is not None and update.device_id not in self.device_ids:
            raise P4RuntimeError("NOT_FOUND", f"unknown device id {update.device_id}")
        role = update.role.name if update.HasField("role") else ""
        if update.HasField("role") and update.role.HasField("config"):
            raise P4RuntimeError("INVALID_ARGUMENT",
                                 "p4exec has no role-config scheme: leave role.config unset (full access)")
        eid = election_int(update.election_id) if update.HasField("election_id") else None
        key = (update.device_id, role)
        with self._lock:
            if session.key is not None and session.key != key:
                raise P4RuntimeError(
                    "FAILED_PRECONDITION", "device_id and role cannot change on an open stream"
                )
            group = self._groups.setdefault(key, _Group())
            if eid is not None and any(
                s is not session and s.election_id == eid for s in group.sessions
            ):
                raise P4RuntimeError(
                    "INVALID_ARGUMENT", f"election id {eid} is already used by another client"
                )
            old_primary = group.primary()
            session.device_id, session.role, session.election_id = update.device_id, role, eid
            if session not in group.sessions:
                group.sessions.append(session)
            if eid is not None and (group.highest is None or eid > group.highest):
                group.highest = eid
            primary = group.primary()
            # Becoming or staying primary, a primary stepping down, or any other change of
            # primary: everyone hears it; a backup that stays a backup: only the sender.
            if primary is session or old_primary is session or primary is not old_primary:
                self._notify(key, group, group.sessions)
            else:
                self._notify(key, group, [session])

    def remove(self, session: Session) -> None:
        """Forget a closed stream; if it was primary, tell the others there is none now."""
        key = session.key
        if key is None:
            return
        with self._lock:
            group = self._groups.get(key)
            if group is None or session not in group.sessions:
                return
            was_primary = group.primary() is session
            group.sessions.remove(session)
            if not group.sessions:
                self._groups.pop(key, None)
            elif was_primary:
                self._notify(key, group, group.sessions)

    def check_primary(self, device_id: int, role: str, eid: int) -> None:
        """Raise PERMISSION_DENIED unless `eid` is the primary's election id for (device, role)."""
        with self._lock:
            group = self._groups.get((device_id, role))
            if group is None and role:
                raise P4RuntimeError("NOT_FOUND", f"no client has arbitrated for role {role!r}")
            primary = group.primary() if group else None
            if primary is None or primary.election_id != eid:
                raise P4RuntimeError(
                    "PERMISSION_DENIED",
                    f"election id {eid} is not the primary's for device {device_id} role {role!r}",
                )

    def primaries(self, device_id: int) -> list[Session]:
        """The primary client of each role of a device (packet-in and digest receivers)."""
        with self._lock:
            out = []
            for (dev, _role), group in self._groups.items():
                primary = group.primary() if dev == device_id else None
                if primary is not None:
                    out.append(primary)
            return out

    def sessions(self) -> list[Session]:
        with self._lock:
            return [s for g in self._groups.values() for s in g.sessions]

    @staticmethod
    def _notify(key: tuple[int, str], group: _Group, targets: list[Session]) -> None:
        primary = group.primary()
        for s in targets:
            msg = p4runtime_pb2.StreamMessageResponse()
            arb = msg.arbitration
            arb.device_id = key[0]
            if key[1]:
                arb.role.name = key[1]
            if group.highest is not None:
                arb.election_id.high = group.highest >> 64
                arb.election_id.low = group.highest & ((1 << 64) - 1)
            if primary is None:
                arb.status.code = code_pb2.NOT_FOUND
                arb.status.message = "no primary client"
            elif primary is s:
                arb.status.code = code_pb2.OK
                arb.status.message = "you are the primary client"
            else:
                arb.status.code = code_pb2.ALREADY_EXISTS
                arb.status.message = "another client is primary"
            s.send(msg)
