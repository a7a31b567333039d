"""The built-in fabrics. Each builder adds hosts, then switches, then links in a fixed order, which fixes
device ids (switch creation order) and port numbers (lowest free port, hosts' downlinks first)."""

from __future__ import annotations

import math

from topologies.model import Topology, TopologyError
from topologies.registry import Param, register

__all__ = ["erack", "upn", "hpn", "line", "leafspine"]

_RATE = Param("rate_gbps", float, 400.0, "host link rate, Gbit/s", 0.001)
_DELAY = Param("delay_us", float, 0.0, "one-way link delay, µs", 0.0)


@register(
    "erack",
    "ERack+-style scale-up super-node: every GPU has one port on each plane's switch (single tier)",
    (Param("gpus", int, 64, "GPUs (endpoints)"), Param("planes", int, 8, "switch planes"),
     Param("radix", int, 64, "ports per plane switch"), _RATE, _DELAY),
    model_note="ethlab's model: one switch chip per plane and 1 link per GPU per plane are assumptions; "
               "published ERack+ material gives the 64-GPU, single-tier, multi-plane shape only.",
)
def erack(gpus: int, planes: int, radix: int, rate_gbps: float, delay_us: float) -> Topology:
    if gpus > radix:
        raise TopologyError(f"erack: {gpus} GPUs need a {gpus}-port plane switch but radix is {radix} "
                            f"(use upn for a two-tier plane)")
    t = Topology("erack")
    for g in range(gpus):
        t.add_host(f"gpu{g}", gpu=g)
    for p in range(planes):
        t.add_switch(f"p{p}", tier=1, plane=p, radix=radix, role="plane")
    for p in range(planes):
        for g in range(gpus):
            t.add_link(f"gpu{g}", f"p{p}", rate_gbps=rate_gbps, delay_us=delay_us)
    return t


@register(
    "upn",
    "UPN-style optical super-node: one tier per plane when the radix allows, else a leaf/spine Clos per plane",
    (Param("gpus", int, 512, "GPUs (endpoints)"), Param("planes", int, 4, "switch planes"),
     Param("radix", int, 128, "switch ports (at most 254: v1model port numbers)", 2),
     Param("rate_gbps", float, 200.0, "link rate, Gbit/s", 0.001), _DELAY),
    model_note="ethlab's model: UPN512 is published as a single-tier optical domain; v1model's 9-bit port "
               "numbers cap an emulated switch at 254 ports, so 512 GPUs become a non-blocking leaf/spine "
               "Clos per plane (half the leaf ports up). Plane count and rates are assumptions.",
)
def upn(gpus: int, planes: int, radix: int, rate_gbps: float, delay_us: float) -> Topology:
    t = Topology("upn")
    for g in range(gpus):
        t.add_host(f"gpu{g}", gpu=g)
    if gpus <= radix:
        for p in range(planes):
            t.add_switch(f"p{p}", tier=1, plane=p, radix=radix, role="plane")
        for p in range(planes):
            for g in range(gpus):
                t.add_link(f"gpu{g}", f"p{p}", rate_gbps=rate_gbps, delay_us=delay_us)
        return t
    down = radix // 2
    up = radix - down
    leaves = math.ceil(gpus / down)
    spines = math.ceil(leaves * up / radix)
    per_pair = up // spines  # parallel links between one leaf and one spine
    if leaves > radix or per_pair < 1:
        raise TopologyError(f"upn: {gpus} GPUs with radix {radix} need more than two tiers "
                            f"({leaves} leaves for {radix}-port spines)")
    for p in range(planes):
        for j in range(leaves):
            t.add_switch(f"p{p}-leaf{j}", tier=1, plane=p, radix=radix, role="leaf")
        for k in range(spines):
            t.add_switch(f"p{p}-spine{k}", tier=2, plane=p, radix=radix, role="spine")
    for p in range(planes):
        for g in range(gpus):
            t.add_link(f"gpu{g}", f"p{p}-leaf{g // down}", rate_gbps=rate_gbps, delay_us=delay_us)
        for j in range(leaves):
            for k in range(spines):
                for _ in range(per_pair):
                    t.add_link(f"p{p}-leaf{j}", f"p{p}-spine{k}", rate_gbps=rate_gbps, delay_us=delay_us)
    return t


@register(
    "hpn",
    "Alibaba HPN-style scale-out pod: 8-NIC hosts, dual-ToR dual-plane, rail-optimised, ToR + aggregation",
    (Param("segments", int, 2, "segments (rail-optimised ToR groups)"),
     Param("hosts_per_segment", int, 2, "hosts per segment"),
     Param("gpus_per_host", int, 8, "GPUs/NICs per host = rails"),
     Param("aggs_per_plane", int, 2, "aggregation switches per plane"),
     Param("rate_gbps", float, 200.0, "NIC port rate, Gbit/s", 0.001),
     Param("uplink_gbps", float, 400.0, "ToR-aggregation link rate, Gbit/s", 0.001),
     Param("radix", int, 128, "switch ports (at most 254)", 2), _DELAY),
    model_note="Scaled-down model of the published HPN shape (SIGCOMM'24): per segment, NIC i of every host "
               "goes to the rail-i ToR pair, port 0 to plane 0 and port 1 to plane 1; each ToR links once "
               "to every aggregation switch of its plane. Segment/aggregation sizes and oversubscription "
               "are parameters, not the production numbers.",
)
def hpn(segments: int, hosts_per_segment: int, gpus_per_host: int, aggs_per_plane: int, rate_gbps: float,
        uplink_gbps: float, radix: int, delay_us: float) -> Topology:
    t = Topology("hpn")
    planes = (0, 1)
    for s in range(segments):
        for h in range(hosts_per_segment):
            host = s * hosts_per_segment + h
            for r in range(gpus_per_host):
                t.add_host(f"host{host}-nic{r}", segment=s, server=host, rail=r)
    for s in range(segments):
        for r in range(gpus_per_host):
            for p in planes:
                t.add_switch(f"seg{s}-rail{r}-tor{p}", tier=1, plane=p, radix=radix, role="tor",
                             segment=s, rail=r)
    for p in planes:
        for a in range(aggs_per_plane):
            t.add_switch(f"p{p}-agg{a}", tier=2, plane=p, radix=radix, role="agg")
    for s in range(segments):
        for r in range(gpus_per_host):
            for p in planes:
                tor = f"seg{s}-rail{r}-tor{p}"
                for h in range(hosts_per_segment):
                    host = s * hosts_per_segment + h
                    t.add_link(f"host{host}-nic{r}", tor, rate_gbps=rate_gbps, delay_us=delay_us)
                for a in range(aggs_per_plane):
                    t.add_link(tor, f"p{p}-agg{a}", rate_gbps=uplink_gbps, delay_us=delay_us)
    return t


@register(
    "line",
    "n switches in a row with a host at each end (teaching, tests)",
    (Param("n", int, 3, "switches"), Param("rate_gbps", float, 10.0, "link rate, Gbit/s", 0.001), _DELAY),
)
def line(n: int, rate_gbps: float, delay_us: float) -> Topology:
    t = Topology("line")
    t.add_host("h1")
    t.add_host("h2")
    for i in range(1, n + 1):
        t.add_switch(f"s{i}", tier=1, plane=0, role="switch")
    t.add_link("h1", "s1", rate_gbps=rate_gbps, delay_us=delay_us)
    for i in range(1, n):
        t.add_link(f"s{i}", f"s{i + 1}", rate_gbps=rate_gbps, delay_us=delay_us)
    t.add_link("h2", f"s{n}", rate_gbps=rate_gbps, delay_us=delay_us)
    return t


@register(
    "leafspine",
    "two-tier leaf/spine: every leaf links once to every spine (teaching, tests)",
    (Param("leaves", int, 2, "leaf switches"), Param("spines", int, 2, "spine switches"),
     Param("hosts_per_leaf", int, 2, "hosts per leaf"),
     Param("rate_gbps", float, 10.0, "link rate, Gbit/s", 0.001), _DELAY),
)
def leafspine(leaves: int, spines: int, hosts_per_leaf: int, rate_gbps: float, delay_us: float) -> Topology:
    t = Topology("leafspine")
    for j in range(leaves):
        for h in range(hosts_per_leaf):
            t.add_host(f"h{j * hosts_per_leaf + h + 1}", leaf=j + 1)
    for j in range(leaves):
        t.add_switch(f"leaf{j + 1}", tier=1, plane=0, role="leaf")
    for k in range(spines):
        t.add_switch(f"spine{k + 1}", tier=2, plane=0, role="spine")
    for j in range(leaves):
        for h in range(hosts_per_leaf):
            t.add_link(f"h{j * hosts_per_leaf + h + 1}", f"leaf{j + 1}", rate_gbps=rate_gbps, delay_us=delay_us)
    for j in range(leaves):
        for k in range(spines):
            t.add_link(f"leaf{j + 1}", f"spine{k + 1}", rate_gbps=rate_gbps, delay_us=delay_us)
    return t
