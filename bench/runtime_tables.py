"""Lookups per second of p4exec's runtime tables (the data plane's hot path), no packets involved.

Run: .venv/bin/python bench/runtime_tables.py [N_LOOKUPS]
"""
from __future__ import annotations

import random
import sys
import time
from collections.abc import Sequence

from p4exec.runtime import (
    ActionCall,
    ActionInfo,
    ActionProfile,
    Exact,
    HashSpec,
    KeyField,
    Lpm,
    MatchKind,
    ParamInfo,
    RuntimeOpError,
    Table,
    TableEntry,
    Ternary,
)
from p4exec.runtime.hashes import hash_fields

FWD = ActionInfo("fwd", 1, (ParamInfo("port", 1, 9),))
ACTIONS = {"fwd": FWD}


def rate(table: Table, keys: Sequence[tuple[int, ...]]) -> float:
    t0 = time.perf_counter()
    for k in keys:
        table.lookup(k, 64)
    return len(keys) / (time.perf_counter() - t0)


def main(n: int = 50_000) -> None:
    rnd = random.Random(1)
    results: dict[str, float] = {}

    exact = Table("exact", 1, [KeyField("dmac", 1, 48, MatchKind.EXACT)], ACTIONS)
    macs = [rnd.getrandbits(48) for _ in range(1000)]
    for m in macs:
        exact.insert(TableEntry((Exact(m),), action=ActionCall("fwd", (1,))))
    results["exact, 1k entries, hits"] = rate(exact, [(rnd.choice(macs),) for _ in range(n)])

    lpm = Table("lpm", 2, [KeyField("dst", 1, 32, MatchKind.LPM)], ACTIONS)
    routes: list[tuple[int, int]] = []
    while len(routes) < 1000:
        plen = rnd.choice((16, 24, 32))
        v = rnd.getrandbits(32) & (((1 << plen) - 1) << (32 - plen))
        try:
            lpm.insert(TableEntry((Lpm(v, plen),), action=ActionCall("fwd", (2,))))
            routes.append((v, plen))
        except RuntimeOpError:
            pass
    keys: list[tuple[int, ...]] = [(v | rnd.getrandbits(32 - p),) for v, p in (rnd.choice(routes) for _ in range(n))]
    results["lpm, 1k routes, hits"] = rate(lpm, keys)

    acl = Table("acl", 3, [KeyField("etype", 1, 16, MatchKind.TERNARY), KeyField("proto", 2, 8, MatchKind.TERNARY)],
                ACTIONS)
    for i in range(100):
        acl.insert(TableEntry((Ternary(i << 8, 0xFF00), Ternary(i, 0xFF)), 100 - i, ActionCall("fwd", (3,))))
    results["ternary, 100 entries, mixed"] = rate(acl, [(rnd.getrandbits(16), rnd.getrandbits(8)) for _ in range(n)])

    sel = Table("ecmp", 4, [KeyField("grp", 1, 16, MatchKind.EXACT)], ACTIONS)
    sel.set_selector_keys([(1, 32), (2, 32), (3, 8), (4, 16), (5, 16)], 6)
    prof = ActionProfile("sel", 5, ACTIONS, hash_spec=None)
    prof.set_hash(HashSpec("crc16", 16))
    sel.profile = prof
    for i in range(1, 5):
        prof.insert_member(i, ActionCall("fwd", (i,)))
    prof.insert_group(1, [(i, 1) for i in range(1, 5)])
    sel.insert(TableEntry((Exact(1),), group_id=1))
    keys = [(1, rnd.getrandbits(32), rnd.getrandbits(32), 6, rnd.getrandbits(16), 80) for _ in range(n)]
    results["selector, 4 members, crc16 over 5-tuple"] = rate(sel, keys)

    fields = [(0x0A000001, 32), (0x0A000002, 32), (6, 8), (1234, 16), (80, 16)]
    t0 = time.perf_counter()
    for _ in range(n):
        hash_fields("crc32", fields)
    results["hash_fields crc32 5-tuple"] = n / (time.perf_counter() - t0)

    width = max(len(k) for k in results)
    for name, per_s in results.items():
        print(f"{name:<{width}}  {per_s:>12,.0f} /s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 50_000)
