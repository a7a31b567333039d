"""The switch-side decision trace (`lb_trace` register in p4src/include/loadbalance.p4, lb_tuning flag 0x10).

Why: herding is a claim about what every leaf chose and what it believed when it chose; the switches record
both, bounded (the first TRACE_SLOTS decisions among two or more candidates each), and this module reads and decodes them over P4Runtime so
docs/experiments.md can show the decisions instead of inferring them from completion times.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from controller.client import SwitchConnection

TRACE_SLOTS = 4096  # p4src/include/headers.p4
KINDS = ("least-loaded", "flowlet", "probed", "ecmp")


@dataclass(frozen=True)
class Decision:
    """One packet's path choice: when (switch µs), for which destination, which port, the load believed."""

    n: int  # decision number on this switch, from 0
    time_us: int
    dst_index: int
    port: int
    belief: int  # packets: local load of the port, or the probed path depth when kind is "probed"
    kind: str


def decode(n: int, word: int) -> Decision:
    """Unpack one lb_trace entry (bit layout in docs/ethplus-header.md)."""
    return Decision(n, (word >> 40) & 0xFFFFFF, (word >> 30) & 0x3FF, (word >> 21) & 0x1FF, (word >> 8) & 0x1FFF,
                    KINDS[(word >> 6) & 3])


def read_trace(conn: SwitchConnection) -> list[Decision]:
    """This switch's recorded decisions, in order (the first TRACE_SLOTS among two or more candidates)."""
    total = conn.read_register("lb_trace_next", 0).get(0, 0)
    if not total:
        return []
    words = conn.read_register("lb_trace")
    return [decode(n, words.get(n, 0)) for n in range(min(total, TRACE_SLOTS))]


def decisions_made(conn: SwitchConnection) -> int:
    """How many decisions among two or more candidates the switch made (recorded or not)."""
    return conn.read_register("lb_trace_next", 0).get(0, 0)


def read_all(connections: Mapping[str, SwitchConnection]) -> dict[str, list[Decision]]:
    return {name: read_trace(conn) for name, conn in sorted(connections.items())}


def write_trace(path: str | Path, traces: Mapping[str, list[Decision]]) -> None:
    """JSON: {switch: [decision, ...]} (decisions as objects)."""
    Path(path).write_text(json.dumps({sw: [asdict(d) for d in ds] for sw, ds in traces.items()}, indent=0))


def load_trace(path: str | Path) -> dict[str, list[Decision]]:
    raw = json.loads(Path(path).read_text())
    return {sw: [Decision(**d) for d in ds] for sw, ds in raw.items()}
