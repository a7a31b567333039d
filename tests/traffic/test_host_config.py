"""One config for the host model, in one unit: a spec's or a command line's seconds and Mbit/s become the
`HostConfig` the model reads (ns, bit/s) once, where they enter; a clock then changes only what is its own
(the virtual clock: `virtual_host_changes`)."""

from __future__ import annotations

import argparse
from dataclasses import fields, replace

import pytest

from ethlab.experiment.spec import parse_spec
from ethlab.experiment.virtual_trial import virtual_host_changes
from traffic.records import HostConfig, ns
from traffic.runargs import add_workload_arguments, config_from_args

#: A spec's engine with every key away from its default (the spec's own units).
UNUSUAL = {"mtu": 1400, "rate_mbps": 1000, "reaction": "dcqcn", "reaction_params": {"g": 0.5},
           "max_packets": 7, "loss_grace_s": 0.002, "burst": 3, "format": "ethplus", "transport": "sr",
           "transport_params": {"rto_s": 1e-3}, "plane_policy": "round-robin", "spray_unit": "flowlet",
           "flowlet_gap_s": 5e-6, "time_limit_s": 2.5}


def _unusual() -> HostConfig:
    spec = parse_spec({"name": "u", "topology": {"name": "leafspine"}, "engine": UNUSUAL,
                       "traffic": {"pattern": "all_reduce", "algorithm": "ring", "size": "64KiB"},
                       "policies": [{"name": "ecmp", "ecn": False}]})
    return replace(spec.engine_config(spec.variants[0]), ecn=False)


def test_the_spec_converts_every_engine_key_once() -> None:
    made, default = _unusual(), HostConfig()
    same = [f.name for f in fields(HostConfig) if getattr(made, f.name) == getattr(default, f.name)]
    assert same == ["port_rate_bps", "send_batch"], f"HostConfig fields the spec does not set: {same}"
    assert made.loss_grace_ns == 2_000_000 and made.flowlet_gap_ns == 5_000  # seconds there, ns here
    assert made.time_limit_ns == 2_500_000_000 and made.flow_rate_bps == 1e9 and made.catch_up_frames == 3


def test_the_command_line_converts_its_seconds_once() -> None:
    parser = argparse.ArgumentParser()
    add_workload_arguments(parser)
    cfg = config_from_args(parser.parse_args(["--rate-mbps", "50", "--loss-grace", "0.125", "--time-limit", "7"]))
    assert (cfg.flow_rate_bps, cfg.loss_grace_ns, cfg.time_limit_ns) == (50e6, 125_000_000, 7_000_000_000)


def test_a_time_that_is_not_finite_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="loss_grace_s must be a finite number of seconds"):
        ns(float("inf"), "loss_grace_s")


def test_the_virtual_clock_changes_only_its_own_fields() -> None:
    base = _unusual()
    made = replace(base, **virtual_host_changes({}))
    changed = {f.name for f in fields(HostConfig) if getattr(made, f.name) != getattr(base, f.name)}
    assert changed == {"flow_rate_bps", "catch_up_frames", "loss_grace_ns", "reaction_params"}
    assert made.flow_rate_bps is None and made.catch_up_frames == 0 and made.loss_grace_ns == 1_000_000
    options = {"flow_rate_gbps": 100, "loss_grace_s": 5e-4, "reaction_params": {"g": 0.25}}
    made = replace(base, **virtual_host_changes(options))
    assert (made.flow_rate_bps, made.loss_grace_ns, made.reaction_params) == (100e9, 500_000, {"g": 0.25})
