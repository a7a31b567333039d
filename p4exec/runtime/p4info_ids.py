"""P4Runtime ids as p4c derives them, so one P4Info serves p4exec and BMv2.

p4c's rule (control-plane symbol table): an object with an ``@id(n)`` annotation gets ``n``, with the
resource-type prefix added in the top 8 bits when ``n`` has none.  Every other object of a resource type,
taken in ascending order of its fully-qualified name, gets
``prefix << 24 | (jenkins_one_at_a_time(name) + k) & 0xFFFFFF`` with the smallest ``k >= 0`` whose id is
not yet taken (linear probing on the hash value; @id-assigned ids are taken first).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import IntEnum


class Prefix(IntEnum):
    """Values equal ``p4.config.v1.P4Ids.Prefix``."""

    ACTION = 0x01
    TABLE = 0x02
    VALUE_SET = 0x03
    CONTROLLER_HEADER = 0x04
    ACTION_PROFILE = 0x11
    COUNTER = 0x12
    DIRECT_COUNTER = 0x13
    METER = 0x14
    DIRECT_METER = 0x15
    REGISTER = 0x16
    DIGEST = 0x17


def jenkins_one_at_a_time(name: str) -> int:
    h = 0
    for b in name.encode():
        h = (h + b) & 0xFFFFFFFF
        h = (h + (h << 10)) & 0xFFFFFFFF
        h ^= h >> 6
    h = (h + (h << 3)) & 0xFFFFFFFF
    h ^= h >> 11
    h = (h + (h << 15)) & 0xFFFFFFFF
    return h


def id_for(prefix: int, fq_name: str) -> int:
    """The id of ``fq_name`` when nothing collides with it."""
    return (int(prefix) << 24) | (jenkins_one_at_a_time(fq_name) & 0xFFFFFF)


def with_prefix(prefix: int, annotated_id: int) -> int:
    """An ``@id`` value as p4c uses it: the type prefix is added if the top byte is 0."""
    top = annotated_id & 0xFF000000
    if top and top != int(prefix) << 24:
        raise ValueError(f"@id {annotated_id:#x} has the wrong 8-bit prefix for type {int(prefix):#x}")
    return annotated_id | (int(prefix) << 24)


def assign_ids(p4info: Mapping[int, Iterable[str]] | Iterable[tuple[int, str]],
               annotated: Mapping[tuple[int, str], int] | None = None,
               taken: set[int] | None = None) -> dict[tuple[int, str], int]:
    """Ids for ``(prefix, fq_name)`` objects, resolving collisions as p4c does.

    ``p4info`` maps a prefix to names, or is an iterable of ``(prefix, name)``; ``annotated`` gives the
    ``@id`` values.  Returns ``{(prefix, name): id}``.  ``taken`` ids (if given) are avoided and updated.
    """
    pairs = (
        [(int(p), n) for p, names in p4info.items() for n in names]
        if isinstance(p4info, Mapping) else [(int(p), n) for p, n in p4info]
    )
    used = taken if taken is not None else set()
    out: dict[tuple[int, str], int] = {}
    for (p, n), raw in (annotated or {}).items():
        i = with_prefix(p, raw)
        if i in used:
            raise ValueError(f"@id {i:#x} is assigned to multiple declarations")
        used.add(i)
        out[(int(p), n)] = i
    for p in sorted({p for p, _ in pairs}):
        for n in sorted({n for q, n in pairs if q == p and (q, n) not in out}, key=lambda s: s.encode()):
            h = jenkins_one_at_a_time(n)
            for k in range(1 << 24):
                i = (p << 24) | ((h + k) & 0xFFFFFF)
                if i not in used:
                    break
            else:
                raise ValueError(f"no free P4Runtime id left for {n}")
            used.add(i)
            out[(p, n)] = i
    return out


def aliases(names: Iterable[str]) -> dict[str, str]:
    """P4Info ``alias`` per name as p4c computes it: the shortest dot-separated suffix that no other
    symbol (of any resource type) shares; the full name when the name is itself a suffix of another."""
    unique = set(names)
    through: dict[tuple[str, ...], int] = {}
    for n in unique:
        parts = tuple(n.split("."))
        for k in range(1, len(parts) + 1):
            through[parts[-k:]] = through.get(parts[-k:], 0) + 1
    out = {}
    for n in unique:
        parts = tuple(n.split("."))
        k = next((k for k in range(1, len(parts) + 1) if through[parts[-k:]] < 2), len(parts))
        out[n] = ".".join(parts[-k:])
    return out
