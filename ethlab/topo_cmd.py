"""`ethlab topo list | show NAME [--param value ...] [--png F] [--yaml F]`: inspect topologies without root."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from topologies.analysis import plane_diversity, ports_per_switch
from topologies.catalog import get, names
from topologies.model import Topology, TopologyError
from topologies.yaml_loader import load, to_yaml


def parse_params(extra: list[str]) -> dict[str, Any]:
    """`--gpus 16 --planes=4` -> {"gpus": "16", "planes": "4"}; values are typed by the built-in."""
    params: dict[str, Any] = {}
    i = 0
    while i < len(extra):
        tok = extra[i]
        if not tok.startswith("--") or tok == "--":
            raise TopologyError(f"unexpected argument {tok!r} (parameters look like --name value)")
        key, eq, value = tok[2:].partition("=")
        if not eq:
            if i + 1 >= len(extra) or extra[i + 1].startswith("--"):
                raise TopologyError(f"parameter --{key} needs a value")
            value = extra[i + 1]
            i += 1
        params[key.replace("-", "_")] = value
        i += 1
    return params


def load_from_args(name: str, extra: list[str]) -> Topology:
    """Shared with `ethlab up`: a built-in with --params, or a YAML file."""
    return load(name, **parse_params(extra))


def run_list(args: argparse.Namespace) -> int:
    table = Table(title="ethlab topologies", show_lines=True)
    table.add_column("name", style="bold")
    table.add_column("description")
    table.add_column("parameters (default)")
    for name in names():
        b = get(name)
        params = "\n".join(f"--{p.name.replace('_', '-')} {p.default:g}  {p.help}" for p in b.params)
        table.add_row(name, b.description + (f"\n[dim]{b.model_note}[/dim]" if b.model_note else ""), params)
    Console(width=max(100, Console().width)).print(table)
    print("A YAML file path works wherever NAME does (schema: docs/topologies.md).")
    return 0


def run_show(args: argparse.Namespace) -> int:
    topo = load_from_args(args.name, args.extra)
    console = Console(width=max(100, Console().width))
    params = " ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in topo.params.items())
    console.print(f"[bold]{topo.name}[/bold]  {params}")
    if topo.description:
        console.print(topo.description)
    counts = Table(title="counts")
    for col in ("switches", "hosts (endpoints)", "links", "planes", "tiers"):
        counts.add_column(col, justify="right")
    tiers = sorted({n.tier for n in topo.switches})
    counts.add_row(str(len(topo.switches)), str(len(topo.hosts)), str(len(topo.links)), str(len(topo.planes)),
                   str(len(tiers)))
    console.print(counts)
    ports = Table(title="ports per switch")
    for col in ("role", "switches", "ports used", "radix"):
        ports.add_column(col, justify="right")
    for (role, used, radix), n in sorted(ports_per_switch(topo).items()):
        ports.add_row(role or "-", str(n), str(used), str(radix))
    console.print(ports)
    div = Table(title="path diversity per plane (host pairs from up to 8 sources; parallel links count)")
    for col in ("plane", "switches", "host pairs", "hops", "shortest paths"):
        div.add_column(col, justify="right")
    for p in topo.planes:
        d = plane_diversity(topo, p)
        nsw = sum(1 for n in topo.switches if n.plane == p)
        div.add_row(str(p), str(nsw), str(d.pairs), _span(d.min_hops, d.max_hops), _span(d.min_paths, d.max_paths))
    console.print(div)
    if args.png:
        from topologies.draw import draw

        console.print(f"picture: {draw(topo, args.png)}")
    if args.yaml:
        out = Path(args.yaml)
        if out.exists() and not out.is_file():  # a FIFO or device would block or swallow the write
            raise OSError(f"--yaml {args.yaml}: not a regular file")
        with open(out, "w") as f:
            f.write(to_yaml(topo))
        console.print(f"yaml: {args.yaml}")
    return 0


def _span(lo: int, hi: int) -> str:
    return str(lo) if lo == hi else f"{lo}–{hi}"


def register(subparsers: argparse._SubParsersAction) -> None:
    topo = subparsers.add_parser("topo", help="list and inspect fabric topologies")
    sub = topo.add_subparsers(dest="topo_command", metavar="ACTION", required=True)
    ls = sub.add_parser("list", help="built-in topologies and their parameters")
    ls.set_defaults(func=run_list)
    show = sub.add_parser("show", help="counts, ports and path diversity of a topology; optional PNG/YAML",
                          description="Built-in parameters are given as --name value (see `ethlab topo list`).")
    show.add_argument("name", help="built-in name or YAML file")
    show.add_argument("--png", metavar="FILE", help="write a picture (layered by tier, coloured by plane)")
    show.add_argument("--yaml", metavar="FILE", help="write the topology as explicit YAML")
    show.set_defaults(func=run_show, accepts_extra=True)
