"""Topology pictures: a layered drawing (hosts at the bottom, one row per switch tier), coloured by plane.

Rows are spread over the full width in model order, so a plane's switches stay next to each other and the
picture of the same parameters is always the same."""

from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; never needs a display

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

from topologies.model import Topology  # noqa: E402

_HOST_COLOR = "#4d4d4d"


def _plane_colors(planes: list[int]) -> dict[int, tuple[float, float, float, float]]:
    cmap = plt.get_cmap("tab10" if len(planes) <= 10 else "tab20")
    return {p: cmap(i % cmap.N) for i, p in enumerate(planes)}


def layered_positions(topo: Topology) -> dict[str, tuple[float, float]]:
    """x in [0, 1] spread evenly per row, y = tier."""
    rows: dict[int, list[str]] = {}
    for n in topo.nodes.values():
        rows.setdefault(n.tier, []).append(n.name)
    pos = {}
    for tier, names in rows.items():
        if tier > 0:  # group switches of one plane together, keep model order inside the plane
            names.sort(key=lambda nm: (topo.nodes[nm].plane or 0))
        k = len(names)
        for i, nm in enumerate(names):
            pos[nm] = ((i + 0.5) / k, float(tier))
    return pos


def draw(topo: Topology, path: str | Path, *, width_in: float = 9.0, height_in: float = 4.5, dpi: int = 100,
         title: str | None = None) -> Path:
    """Write a PNG of the topology; labels are drawn only when they can be read. The directory must exist
    (ethlab runs as root: it creates no directories on a user's say-so)."""
    path = Path(path)
    if not path.parent.is_dir():
        raise FileNotFoundError(f"--png {path}: directory {path.parent} does not exist")
    if path.is_dir():
        raise IsADirectoryError(f"--png {path}: is a directory")
    g = topo.graph()
    pos = layered_positions(topo)
    planes = topo.planes
    colors = _plane_colors(planes)
    n_nodes = g.number_of_nodes()
    n_links = g.number_of_edges()
    fig, ax = plt.subplots(figsize=(width_in, height_in), dpi=dpi)
    edge_width = 1.2 if n_links <= 100 else 0.6 if n_links <= 600 else 0.25
    edge_alpha = 0.8 if n_links <= 600 else 0.35
    seen = set()
    for u, v, d in g.edges(data=True):
        if (u, v, d["plane"]) in seen:  # parallel links draw as one line
            continue
        seen.add((u, v, d["plane"]))
        (x1, y1), (x2, y2) = pos[u], pos[v]
        ax.plot([x1, x2], [y1, y2], color=colors[d["plane"]], lw=edge_width, alpha=edge_alpha, zorder=1)
    host_size = 60 if len(topo.hosts) <= 64 else 12
    hosts = [n.name for n in topo.hosts]
    ax.scatter([pos[h][0] for h in hosts], [pos[h][1] for h in hosts], s=host_size, c=_HOST_COLOR, marker="o",
               zorder=2)
    sw = topo.switches
    ax.scatter([pos[s.name][0] for s in sw], [pos[s.name][1] for s in sw], s=140 if len(sw) <= 40 else 50,
               c=[colors[s.plane or 0] for s in sw], marker="s", edgecolors="black", linewidths=0.6, zorder=3)
    if n_nodes <= 80:
        for name, (x, y) in pos.items():
            node = topo.nodes[name]
            rot, va, dy = (90, "top", -0.12) if not node.is_switch else (0, "bottom", 0.1)
            if node.is_switch and len(sw) > 12:
                rot, va = 60, "bottom"
            ax.text(x, y + dy, name, fontsize=7, rotation=rot, ha="center", va=va, zorder=4)
    tiers = sorted({n.tier for n in topo.nodes.values()})
    ax.set_yticks(tiers)
    ax.set_yticklabels([_tier_label(topo, t) for t in tiers], fontsize=8)
    ax.set_xticks([])
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.55 if n_nodes <= 80 else -0.2, max(tiers) + 0.45)
    for spine in ax.spines.values():
        spine.set_visible(False)
    params = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in topo.params.items())
    ax.set_title(title or "\n".join(textwrap.wrap(f"{topo.name}: {params}", 100)), fontsize=9)
    handles = [Line2D([0], [0], color=colors[p], lw=2, label=f"plane {p}") for p in planes[:10]]
    if len(planes) > 10:
        handles.append(Line2D([0], [0], color="white", label=f"+{len(planes) - 10} planes"))
    fig.legend(handles=handles, loc="lower right", fontsize=7, ncols=min(len(handles), 6), frameon=False)
    fig.text(0.01, 0.01, f"{len(topo.switches)} switches, {len(topo.hosts)} hosts, {n_links} links",
             fontsize=7, color="#555555")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.savefig(path, format="png")
    plt.close(fig)
    return path


def _tier_label(topo: Topology, tier: int) -> str:
    if tier == 0:
        return "hosts"
    roles = sorted({n.role for n in topo.switches if n.tier == tier and n.role})
    return "/".join(roles) or f"tier {tier}"

