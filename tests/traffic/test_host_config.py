"""One source of truth for the host model's options: `HostConfig.from_engine` makes every field of the host
model's config from a run's `EngineConfig` (converting its units once), whatever the clock; a clock changes
only what is its own (the virtual clock: `virtual_host_changes`)."""

from __future__ import annotations

from dataclasses import fields

from ethlab.experiment.virtual_trial import virtual_host_changes
from traffic.host import HostConfig
from traffic.records import EngineConfig


def _unusual_engine() -> EngineConfig:
    """A run's options with every host-related value away from its default."""
    return EngineConfig(mtu=9000, rate_bps=1e9, reaction="dcqcn", reaction_params={"g": 0.5}, ecn=False,
                        max_packets=7, loss_grace_s=0.002, burst=3, frame_format="ethplus", transport="sr",
                        transport_params={"rto_s": 1e-3}, plane_policy="round-robin", spray_unit="flowlet",
                        flowlet_gap_s=5e-6)


def test_every_host_field_comes_from_the_run_options() -> None:
    made, default = HostConfig.from_engine(_unusual_engine()), HostConfig()
    same = [f.name for f in fields(HostConfig) if getattr(made, f.name) == getattr(default, f.name)]
    assert not same, f"HostConfig fields not taken from EngineConfig: {same}"
    assert made.loss_grace_ns == 2_000_000 and made.flowlet_gap_ns == 5_000  # seconds there, ns here
    assert made.flow_rate_bps == 1e9 and made.catch_up_frames == 3


def test_the_virtual_clock_changes_only_its_own_fields() -> None:
    eng = _unusual_engine()
    made, base = HostConfig.from_engine(eng, **virtual_host_changes({})), HostConfig.from_engine(eng)
    changed = {f.name for f in fields(HostConfig) if getattr(made, f.name) != getattr(base, f.name)}
    assert changed == {"flow_rate_bps", "catch_up_frames", "loss_grace_ns", "reaction_params"}
    assert made.flow_rate_bps is None and made.catch_up_frames == 0 and made.loss_grace_ns == 1_000_000
    options = {"flow_rate_gbps": 100, "loss_grace_s": 5e-4, "reaction_params": {"g": 0.25}}
    made = HostConfig.from_engine(eng, **virtual_host_changes(options))
    assert (made.flow_rate_bps, made.loss_grace_ns, made.reaction_params) == (100e9, 500_000, {"g": 0.25})
