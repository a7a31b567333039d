"""Packet replication engine entries (multicast groups, clone sessions) and digest configuration."""

from __future__ import annotations

from collections.abc import Iterable

from p4.v1 import p4runtime_pb2 as pb


def _replicas(ports: Iterable[int | tuple[int, int]]) -> list[pb.Replica]:
    replicas = []
    for item in ports:
        port, instance = item if isinstance(item, tuple) else (item, 1)
        replicas.append(pb.Replica(egress_port=port, instance=instance))
    return replicas


class PreMixin:
    """Builders shared by SwitchConnection; kept apart because they need no P4Info."""

    @staticmethod
    def multicast_group(group_id: int, ports: Iterable[int | tuple[int, int]]) -> pb.PacketReplicationEngineEntry:
        entry = pb.PacketReplicationEngineEntry()
        entry.multicast_group_entry.multicast_group_id = group_id
        entry.multicast_group_entry.replicas.extend(_replicas(ports))
        return entry

    @staticmethod
    def clone_session(session_id: int, ports: Iterable[int | tuple[int, int]], class_of_service: int = 0,
                      packet_length_bytes: int = 0) -> pb.PacketReplicationEngineEntry:
        entry = pb.PacketReplicationEngineEntry()
        session = entry.clone_session_entry
        session.session_id = session_id
        session.class_of_service = class_of_service
        session.packet_length_bytes = packet_length_bytes
        session.replicas.extend(_replicas(ports))
        return entry

    def digest_config(self, name: str, max_timeout_ns: int = 0, max_list_size: int = 1,
                      ack_timeout_ns: int = 1_000_000_000) -> pb.DigestEntry:
        digest = self._index().get("digests", name)  # type: ignore[attr-defined]
        entry = pb.DigestEntry(digest_id=digest.preamble.id)
        entry.config.max_timeout_ns = max_timeout_ns
        entry.config.max_list_size = max_list_size
        entry.config.ack_timeout_ns = ack_timeout_ns
        return entry
