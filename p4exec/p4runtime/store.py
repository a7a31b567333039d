"""What the P4Runtime server keeps beside the runtime objects, per pipeline.

Table entries, default actions, the direct counters and meters of entries, and action profile
members and groups live in the runtime objects only (`p4exec.runtime`): Read encodes them. Kept here
is what the runtime does not model: the PRE, digest and value set configurations, indexed meter configs, the values of resources a pipeline has no runtime
object for, and the hidden groups standing for one-shot action sets.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from p4.v1 import p4runtime_pb2


@dataclass
class Realized:
    """The runtime group (and its members) standing for one one-shot entry (oneshot.py)."""

    ap_id: int
    group_id: int
    member_ids: list[int] = field(default_factory=list)
    action_set: p4runtime_pb2.ActionProfileActionSet | None = None  # as written: what Read returns


@dataclass
class Store:
    mcast: dict[int, p4runtime_pb2.MulticastGroupEntry] = field(default_factory=dict)
    clones: dict[int, p4runtime_pb2.CloneSessionEntry] = field(default_factory=dict)
    digests: dict[int, p4runtime_pb2.DigestEntry.Config] = field(default_factory=dict)
    value_sets: dict[int, p4runtime_pb2.ValueSetEntry] = field(default_factory=dict)
    # (meter id, index) -> MeterConfig, for reads
    meters: dict[tuple[int, int], p4runtime_pb2.MeterConfig] = field(default_factory=dict)
    # Fallbacks when the pipeline has no runtime object for the resource.
    counters: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)
    registers: dict[tuple[int, int], int] = field(default_factory=dict)
    # (table id, runtime entry key) -> the hidden group behind a one-shot entry
    oneshots: dict[tuple[int, tuple], Realized] = field(default_factory=dict)
