"""Rich tables for results: switch ports of one trial, and the policy comparison of an experiment."""

from __future__ import annotations

from typing import Any

from rich.table import Table


def links_table(links: list[dict[str, Any]], drops: dict[str, dict[str, int]], limit: int = 24) -> Table:
    """Busiest switch egress ports first."""
    t = Table(title="switch ports (busiest first)")
    for col in ("switch", "port", "peer", "tx pkts", "tx MB", "util %", "ECN marks", "max queue"):
        t.add_column(col, justify="right")
    rows = sorted(links, key=lambda r: -r["tx_bytes"])
    for r in rows[:limit]:
        if not r["tx_packets"]:
            continue
        t.add_row(r["switch"], str(r["port"]), r["peer"], str(r["tx_packets"]), f"{r['tx_bytes'] / 1e6:.2f}",
                  f"{100 * r['utilisation']:.1f}", str(r["ecn_marked"]), str(r["qdepth_max"]))
    if drops:
        t.caption = "drops: " + "; ".join(f"{sw} " + ", ".join(f"{k} {v}" for k, v in d.items())
                                          for sw, d in sorted(drops.items()))
    return t
