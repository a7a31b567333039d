"""Packet replication engine configuration: multicast groups and clone sessions.

Two ways in, one state: P4Runtime writes whole groups (``PacketReplicationEngineEntry``) and BMv2's CLI
(used by STF files) builds groups from nodes (``mc_node_create RID PORTS`` -> handle 0, 1, ...;
``mc_node_associate GROUP HANDLE``).  A group's replicas are ``(egress_port, instance)`` pairs, where the
instance is what v1model exposes as ``egress_rid``.  Node-built groups list nodes in association order and,
within a node, ports in ascending order (BMv2 keeps a node's ports in a bitmap).
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from p4exec.runtime.errors import RuntimeOpError, invalid

Replica = tuple[int, int]  # (egress_port, instance)


@dataclass(frozen=True)
class CloneSession:
    session_id: int
    replicas: tuple[Replica, ...] = ()
    class_of_service: int = 0
    packet_length_bytes: int = 0  # 0: no truncation
    mgrp: int | None = None  # BMv2 ``mirroring_add_mc``: replicate through a multicast group


PORT_BITS = 9       # v1model egress_port / egress_spec
INSTANCE_BITS = 16  # v1model egress_rid


def _check_replicas(replicas: Iterable[Replica]) -> tuple[Replica, ...]:
    """P4Runtime: (port, instance) pairs unique, each within what v1model can carry, else INVALID_ARGUMENT."""
    out = tuple((int(p), int(r)) for p, r in replicas)
    if len(set(out)) != len(out):
        raise invalid("duplicate (egress_port, instance) replica")
    for p, r in out:
        if p < 0 or p >> PORT_BITS:
            raise invalid(f"egress port {p} does not fit v1model's {PORT_BITS} bits")
        if r < 0 or r >> INSTANCE_BITS:
            raise invalid(f"instance {r} does not fit v1model's {INSTANCE_BITS}-bit egress_rid")
    return out


class PacketReplication:
    def __init__(self) -> None:
        self.groups: dict[int, tuple[Replica, ...]] = {}
        self.sessions: dict[int, CloneSession] = {}
        self._nodes: dict[int, tuple[int, tuple[int, ...]]] = {}
        self._group_nodes: dict[int, list[int]] = {}
        self._next_handle = 0

    # ------------------------------------------------------------------------ multicast (P4Runtime)

    def insert_group(self, group_id: int, replicas: Iterable[Replica]) -> None:
        reps = self._checked_group(group_id, replicas)
        if group_id in self.groups:
            raise RuntimeOpError("ALREADY_EXISTS", f"multicast group {group_id} exists")
        self.groups[group_id] = reps

    def modify_group(self, group_id: int, replicas: Iterable[Replica]) -> None:
        reps = self._checked_group(group_id, replicas)
        if group_id not in self.groups:
            raise RuntimeOpError("NOT_FOUND", f"no multicast group {group_id}")
        self.groups[group_id] = reps
        self._group_nodes.pop(group_id, None)

    def delete_group(self, group_id: int) -> None:
        if group_id not in self.groups:
            raise RuntimeOpError("NOT_FOUND", f"no multicast group {group_id}")
        del self.groups[group_id]
        self._group_nodes.pop(group_id, None)

    @staticmethod
    def _checked_group(group_id: int, replicas: Iterable[Replica]) -> tuple[Replica, ...]:
        if not isinstance(group_id, int) or group_id <= 0 or group_id >> 16:
            raise invalid(f"multicast group id {group_id!r} must be in [1, 65535]")
        return _check_replicas(replicas)

    def replicas(self, group_id: int) -> tuple[Replica, ...]:
        """Data plane: the copies of ``mcast_grp`` (empty for an unknown group: BMv2 drops)."""
        return self.groups.get(group_id, ())

    # --------------------------------------------------------------------------- nodes (BMv2 CLI)

    def mgrp_create(self, group_id: int) -> None:
        self.insert_group(group_id, ())
        self._group_nodes[group_id] = []

    def node_create(self, rid: int, ports: Iterable[int]) -> int:
        handle = self._next_handle
        self._next_handle += 1
        self._nodes[handle] = (rid, tuple(sorted(set(ports))))
        return handle

    def node_update(self, handle: int, ports: Iterable[int]) -> None:
        if handle not in self._nodes:
            raise RuntimeOpError("NOT_FOUND", f"no multicast node {handle}")
        self._nodes[handle] = (self._nodes[handle][0], tuple(sorted(set(ports))))
        for gid, handles in self._group_nodes.items():
            if handle in handles:
                self._refresh(gid)

    def node_associate(self, group_id: int, handle: int) -> None:
        if handle not in self._nodes:
            raise RuntimeOpError("NOT_FOUND", f"no multicast node {handle}")
        if group_id not in self.groups:
            raise RuntimeOpError("NOT_FOUND", f"no multicast group {group_id}")
        handles = self._group_nodes.setdefault(group_id, [])
        if handle in handles:
            raise RuntimeOpError("ALREADY_EXISTS", f"node {handle} already in group {group_id}")
        handles.append(handle)
        self._refresh(group_id)

    def node_dissociate(self, group_id: int, handle: int) -> None:
        handles = self._group_nodes.get(group_id, [])
        if handle not in handles:
            raise RuntimeOpError("NOT_FOUND", f"node {handle} not in group {group_id}")
        handles.remove(handle)
        self._refresh(group_id)

    def _refresh(self, group_id: int) -> None:
        reps: list[Replica] = []
        for h in self._group_nodes[group_id]:
            rid, ports = self._nodes[h]
            reps.extend((p, rid) for p in ports)
        self.groups[group_id] = tuple(reps)

    # ------------------------------------------------------------------------------ clone sessions

    def insert_session(self, session: CloneSession) -> None:
        self._p4rt_session_id(session.session_id)
        s = self._checked_session(session)
        if s.session_id in self.sessions:
            raise RuntimeOpError("ALREADY_EXISTS", f"clone session {s.session_id} exists")
        self.sessions[s.session_id] = s

    def modify_session(self, session: CloneSession) -> None:
        self._p4rt_session_id(session.session_id)
        s = self._checked_session(session)
        if s.session_id not in self.sessions:
            raise RuntimeOpError("NOT_FOUND", f"no clone session {s.session_id}")
        self.sessions[s.session_id] = s

    def delete_session(self, session_id: int) -> None:
        if session_id not in self.sessions:
            raise RuntimeOpError("NOT_FOUND", f"no clone session {session_id}")
        del self.sessions[session_id]

    @staticmethod
    def _p4rt_session_id(session_id: int) -> None:
        if session_id == 0:  # P4Runtime reserves 0 for wildcard reads; BMv2's CLI may use it
            raise invalid("clone session id 0 cannot be written through P4Runtime")

    def set_session(self, session: CloneSession) -> None:
        """Insert or replace (BMv2 ``mirroring_add`` semantics; session 0 allowed)."""
        s = self._checked_session(session)
        self.sessions[s.session_id] = s

    @staticmethod
    def _checked_session(s: CloneSession) -> CloneSession:
        if not isinstance(s.session_id, int) or s.session_id < 0 or s.session_id >> 32:
            raise invalid(f"clone session id {s.session_id!r} out of range")
        if s.packet_length_bytes < 0 or not 0 <= s.class_of_service < 8:
            raise invalid("clone session: bad packet_length_bytes or class_of_service")
        return CloneSession(s.session_id, _check_replicas(s.replicas), s.class_of_service,
                            s.packet_length_bytes, s.mgrp)

    def clone_replicas(self, session_id: int) -> tuple[Replica, ...]:
        """Data plane: where the clones of ``session_id`` go (empty for an unknown session: no clone)."""
        s = self.sessions.get(session_id)
        if s is None:
            return ()
        if s.mgrp is not None:
            return self.replicas(s.mgrp)
        return s.replicas

    def reset(self) -> None:
        self.__init__()  # type: ignore[misc]
