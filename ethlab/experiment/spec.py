"""Experiment specs: one YAML file says which fabric, which traffic, which policies to compare, which faults,
how many repetitions and which seed. Loading validates everything up front, so a typo fails in a second with
the key's path, not half-way through a ten-minute run.

    name: demo
    topology: {name: erack, params: {gpus: 8, planes: 2}}
    target: p4exec
    seed: 1
    repetitions: 2
    fabric: {rate_scale: 2.5e-4, queue_depth: 64}
    engine: {rate_mbps: 20, reaction: none}
    traffic: {pattern: all_reduce, size: 128KiB, iterations: 3, algorithm: ring, params: {slices: 2}}
    policies:
      - {name: ecmp}
      - {name: spray, ecn: {kmin: 5, kmax: 50, pmax: 0.2}}
      - {label: spray-dcqcn, name: spray, engine: {reaction: dcqcn}}
    faults:
      - {at_s: 0.3, action: link_down, a: leaf1, b: spine1, for_s: 0.5}
    link_layer: {frame_error_rate: 1e-4, llr: true}   # also per policy entry (docs/experiments.md)
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from controller.policies import POLICIES, Policy, make_policy
from ethlab.bringup import TARGETS
from ethlab.checks import UsageError, check_engine, check_fabric, check_plan, check_traffic
from ethlab.experiment.faults import Fault
from linklayer import LinkLayerConfig, LinkLayerError
from p4exec.textfile import InputFileError, read_user_text
from topologies.keys import unknown_keys
from topologies.model import Topology
from topologies.yaml_loader import load as load_topology
from traffic.records import DEFAULT_BURST, HostConfig, PlannedCollective, ns
from traffic.replay import pattern_plan
from traffic.trace import load as load_trace
from traffic.trace import parse_size


class SpecError(ValueError):
    """A spec problem, with the path of the offending key."""


ENGINE_KEYS = {"rate_mbps", "mtu", "reaction", "reaction_params", "format", "time_limit_s", "loss_grace_s",
               "max_packets", "burst", "transport", "transport_params", "plane_policy", "spray_unit", "flowlet_gap_s"}
FABRIC_KEYS = {"rate_scale", "queue_depth", "pipeline"}
MAX_REPETITIONS = 100
TOP_KEYS = {"name", "description", "expect", "topology", "target", "seed", "repetitions", "fabric", "engine",
            "traffic", "policies", "faults", "sample_interval_s", "clock", "virtual", "link_layer"}


@dataclass
class Variant:
    """One policy setting to compare: a label (unique), the policy name, its options, and overrides."""

    label: str
    policy: str
    ecn: dict[str, Any] | bool = True
    options: dict[str, Any] = field(default_factory=dict)
    engine: dict[str, Any] = field(default_factory=dict)
    fabric: dict[str, Any] = field(default_factory=dict)
    link_layer: dict[str, Any] = field(default_factory=dict)  # over the spec's `link_layer`

    def make_policy(self) -> Policy:
        return make_policy(self.policy, ecn=copy.deepcopy(self.ecn), **self.options)


@dataclass
class Spec:
    name: str
    topology: str
    topology_params: dict[str, Any]
    traffic: dict[str, Any]
    variants: list[Variant]
    target: str = "p4exec"
    seed: int = 1
    repetitions: int = 1
    fabric: dict[str, Any] = field(default_factory=dict)
    engine: dict[str, Any] = field(default_factory=dict)
    faults: list[Fault] = field(default_factory=list)
    sample_interval_s: float = 0.25
    description: str = ""
    source: str | None = None
    expect: str = ""  # what to look for in the results (printed under the comparison and in report.md)
    clock: str = "emulated"  # or "virtual": vfabric's discrete-event fabric (ethlab/experiment/virtual_trial.py)
    virtual: dict[str, Any] = field(default_factory=dict)  # options of the virtual clock (limits, delays)
    link_layer: dict[str, Any] = field(default_factory=dict)  # linklayer.LinkLayerConfig's mapping

    # ---- what a trial needs --------------------------------------------------------------------------
    def build_topology(self) -> Topology:
        return load_topology(self.topology, **self.topology_params)

    def engine_options(self, variant: Variant) -> dict[str, Any]:
        """The variant's `engine` keys over the spec's, every default filled in, in the spec's own units."""
        e = {"rate_mbps": 20.0, "mtu": 1500, "reaction": "none", "reaction_params": {}, "format": "roce",
             "time_limit_s": 60.0, "loss_grace_s": 0.3, "max_packets": 2_000_000, "burst": DEFAULT_BURST,
             "transport": "none", "transport_params": {}, "plane_policy": "pinned", "spray_unit": "packet",
             "flowlet_gap_s": 100e-6, **self.engine, **variant.engine}
        if e["reaction"] == "none":
            e["reaction_params"] = {}
        return e

    def engine_config(self, variant: Variant) -> HostConfig:
        """The hosts' options of a variant: the spec's seconds and Mbit/s converted here, once."""
        e = self.engine_options(variant)
        return HostConfig(flow_rate_bps=float(e["rate_mbps"]) * 1e6, mtu=int(e["mtu"]), reaction=e["reaction"],
                          reaction_params=dict(e["reaction_params"] or {}), frame_format=e["format"],
                          time_limit_ns=ns(float(e["time_limit_s"]), "time_limit_s"),
                          loss_grace_ns=ns(float(e["loss_grace_s"]), "loss_grace_s"),
                          max_packets=int(e["max_packets"]), catch_up_frames=int(e["burst"]),
                          transport=e["transport"], transport_params=dict(e["transport_params"] or {}),
                          plane_policy=e["plane_policy"], spray_unit=e["spray_unit"],
                          flowlet_gap_ns=ns(float(e["flowlet_gap_s"]), "flowlet_gap_s"))

    def link_layer_config(self, variant: Variant) -> LinkLayerConfig:
        """The spec's `link_layer` with the variant's keys over it (nested mappings merged key by key)."""
        return self.link_layer_config_from(self.link_layer, variant)

    @staticmethod
    def link_layer_config_from(base: dict[str, Any], variant: Variant) -> LinkLayerConfig:
        if not base and not variant.link_layer:
            return LinkLayerConfig()
        return LinkLayerConfig.parse(merge_link_layer(base, variant.link_layer),
                                     f"policies[{variant.label}].link_layer")

    def fabric_options(self, variant: Variant) -> dict[str, Any]:
        return {"rate_scale": None, "queue_depth": None, **self.fabric, **variant.fabric}

    def plan(self, topo: Topology) -> list[PlannedCollective]:
        """The traffic as planned collectives on the topology's endpoints — a pure function of the spec."""
        eids = sorted(ep.eid for ep in topo.endpoints.values())
        t = self.traffic
        if "trace" in t:
            return load_trace(self._resolve(t["trace"])).plan(eids)
        params = dict(t.get("params") or {})
        if len(topo.planes) > 1:
            params.setdefault("planes", len(topo.planes))
        if t["pattern"] in ("all_to_all", "moe") and "seed" not in params:
            params["seed"] = self.seed
        ranks = eids[: t["ranks"]] if t.get("ranks") else eids
        return pattern_plan(t["pattern"], ranks, parse_size(str(t["size"])), int(t.get("iterations", 1)),
                            t.get("algorithm"), float(t.get("gap_s", 0.0)), **params)

    def _resolve(self, path: str) -> str:
        p = Path(path)
        if not p.is_absolute() and self.source and not p.exists():
            p = Path(self.source).parent / p
        return str(p)

    def resolved(self) -> dict[str, Any]:
        """The spec with every default filled in: what the results directory records."""
        return {"name": self.name, "description": self.description, "expect": self.expect, "target": self.target,
                "seed": self.seed,
                "repetitions": self.repetitions,
                "topology": {"name": self.topology, "params": self.topology_params},
                "fabric": self.fabric, "engine": self.engine, "traffic": self.traffic,
                "policies": [{"label": v.label, "name": v.policy, "ecn": v.ecn, "options": v.options,
                              "engine": v.engine, "fabric": v.fabric,
                              "resolved_engine": self.engine_options(v),
                              "resolved_fabric": self.fabric_options(v),
                              **({"link_layer": v.link_layer} if v.link_layer else {})} for v in self.variants],
                "faults": [asdict(f) for f in self.faults], "sample_interval_s": self.sample_interval_s,
                "clock": self.clock, "virtual": self.virtual, "source": self.source,
                **({"link_layer": self.link_layer} if self.link_layer else {})}


def merge_link_layer(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """`over`'s keys on `base`'s; a mapping under both (llr, pfc, cbfc) merges key by key (`llr: true` over a
    mapping turns it on with the mapping's knobs)."""
    out = dict(base)
    for key, value in over.items():
        old = out.get(key)
        if isinstance(old, dict) and isinstance(value, dict):
            out[key] = {**old, **value}
        elif isinstance(old, dict) and isinstance(value, bool) and key == "llr":
            out[key] = {**old, "enabled": value}
        else:
            out[key] = value
    return out


def schedule_digest(plan: list[PlannedCollective]) -> str:
    """A fingerprint of every transfer of every planned collective: equal digests = identical schedules."""
    h = hashlib.sha256()
    for pc in plan:
        h.update(repr((pc.name, pc.iteration, pc.start_s, pc.after, pc.delay_s)).encode())
        for tr in pc.schedule.transfers:
            h.update(repr(tr).encode())
    return h.hexdigest()[:16]


# ---- loading and validation -------------------------------------------------------------------------
def _need(cond: bool, where: str, msg: str) -> None:
    if not cond:
        raise SpecError(f"{where}: {msg}")


def _unknown(d: dict, allowed: set[str], where: str) -> None:
    extra = unknown_keys(d, allowed)
    _need(extra is None, where, extra or "")


def _variant(i: int, raw: Any) -> Variant:
    where = f"policies[{i}]"
    if isinstance(raw, str):
        raw = {"name": raw}
    _need(isinstance(raw, dict), where, "must be a policy name or a mapping")
    _unknown(raw, {"name", "label", "ecn", "options", "engine", "fabric", "link_layer"}, where)
    _need(raw.get("name") in POLICIES, f"{where}.name", f"must be one of {', '.join(sorted(POLICIES))}")
    ecn = raw.get("ecn", True)
    if isinstance(ecn, dict):
        _unknown(ecn, {"kmin", "kmax", "pmax"}, f"{where}.ecn")
    else:
        _need(isinstance(ecn, bool), f"{where}.ecn", "must be true, false or {kmin, kmax, pmax}")
    engine, fabric = raw.get("engine") or {}, raw.get("fabric") or {}
    _unknown(engine, ENGINE_KEYS, f"{where}.engine")
    _unknown(fabric, FABRIC_KEYS, f"{where}.fabric")
    ll = raw.get("link_layer") or {}
    _need(isinstance(ll, dict), f"{where}.link_layer", f"must be a mapping (got {ll!r})")
    v = Variant(str(raw.get("label", raw["name"])), raw["name"], ecn, dict(raw.get("options") or {}), engine, fabric,
                dict(ll))
    try:
        v.make_policy().describe()
        if isinstance(ecn, dict):
            v.make_policy().ecn.params()  # type: ignore[union-attr]
    except (TypeError, ValueError) as err:
        raise SpecError(f"{where}: {err}") from None
    return v


def parse_spec(data: Any, source: str | None = None) -> Spec:
    _need(isinstance(data, dict), "spec", "must be a mapping")
    _unknown(data, TOP_KEYS, "spec")
    _need(isinstance(data.get("name"), str) and data["name"].replace("-", "").replace("_", "").isalnum(),
          "name", "must be a word (letters, digits, - and _)")
    topo = data.get("topology")
    if isinstance(topo, str):
        topo = {"name": topo}
    _need(isinstance(topo, dict) and "name" in topo, "topology", "must be a name or {name, params}")
    _unknown(topo, {"name", "params"}, "topology")
    target = data.get("target", "p4exec")
    _need(isinstance(target, str) and target in TARGETS, "target", f"must be one of {', '.join(TARGETS)}")
    traffic = data.get("traffic")
    _need(isinstance(traffic, dict), "traffic", "must be a mapping with pattern+size or trace")
    _unknown(traffic, {"pattern", "size", "iterations", "algorithm", "params", "trace", "ranks", "gap_s"}, "traffic")
    _need(("pattern" in traffic and "size" in traffic) != ("trace" in traffic), "traffic",
          "give either pattern and size, or trace")
    if "size" in traffic:
        try:
            parse_size(str(traffic["size"]))
        except Exception as err:
            raise SpecError(f"traffic.size: {err}") from None
    policies = data.get("policies")
    _need(isinstance(policies, list) and bool(policies), "policies", "must be a non-empty list")
    assert isinstance(policies, list)
    variants = [_variant(i, p) for i, p in enumerate(policies)]
    labels = [v.label for v in variants]
    _need(len(set(labels)) == len(labels), "policies", f"labels must be unique (got {labels}); add label:")
    fabric, engine = data.get("fabric") or {}, data.get("engine") or {}
    _need(isinstance(fabric, dict), "fabric", "must be a mapping")
    _need(isinstance(engine, dict), "engine", "must be a mapping")
    _need(isinstance(data.get("faults") or [], list), "faults", "must be a list of mappings")
    _need(isinstance(topo.get("params") or {}, dict), "topology.params", "must be a mapping")
    _unknown(fabric, FABRIC_KEYS, "fabric")
    _unknown(engine, ENGINE_KEYS, "engine")
    faults = []
    for i, raw in enumerate(data.get("faults") or []):
        _need(isinstance(raw, dict), f"faults[{i}]", "must be a mapping")
        try:
            faults.append(Fault(**raw))
        except (TypeError, ValueError) as err:
            raise SpecError(f"faults[{i}]: {err}") from None
    reps = data.get("repetitions", 1)
    _need(isinstance(reps, int) and 1 <= reps <= MAX_REPETITIONS, "repetitions",
          f"must be an integer 1..{MAX_REPETITIONS}")
    seed = data.get("seed", 1)
    _need(isinstance(seed, int) and seed >= 0, "seed", "must be a non-negative integer")
    sample = data.get("sample_interval_s", 0.25)
    _need(isinstance(sample, int | float) and not isinstance(sample, bool) and 0 <= sample <= 60,
          "sample_interval_s", "must be a number of seconds 0..60 (0 = no sampling)")
    spec = Spec(data["name"], topo["name"], dict(topo.get("params") or {}), dict(traffic), variants, target, seed,
                reps, dict(fabric), dict(engine), faults, float(sample),
                str(data.get("description", "")), source, str(data.get("expect", "") or "").strip())
    for v in variants:
        where = f"policies[{v.label}]"
        try:
            check_engine(spec.engine_config(v), f"{where}: engine")
            options = spec.fabric_options(v)
            check_fabric(options["rate_scale"], options["queue_depth"])
            if options.get("pipeline") not in (None, "python", "native"):
                raise UsageError(f"fabric.pipeline: must be python or native (got {options['pipeline']!r})")
        except UsageError as err:
            raise SpecError(str(err)) from None
        except (TypeError, ValueError) as err:
            raise SpecError(f"{where}: engine/fabric value: {err}") from None
    spec.clock, spec.virtual = _clock(data)
    spec.link_layer = _link_layer(data.get("link_layer"), spec)
    try:
        t = spec.build_topology()
    except Exception as err:
        raise SpecError(f"topology: {err}") from None
    for i, f in enumerate(faults):
        for node in (f.a, f.b, f.switch):
            _need(node is None or node in t.nodes, f"faults[{i}]", f"{node!r} is not a node of {t.name}")
        if f.a and f.b:
            _need(any({ln.a.owner, ln.b.owner} == {f.a, f.b} for ln in t.links), f"faults[{i}]",
                  f"no link between {f.a} and {f.b}")
    try:
        size = parse_size(str(traffic["size"])) if "size" in traffic else None
        iterations = traffic.get("iterations", 1)
        _need(isinstance(iterations, int) and not isinstance(iterations, bool), "traffic.iterations",
              "must be an integer")
        check_traffic(size, iterations, dict(traffic.get("params") or {}), t)
        check_plan(spec.plan(t), t)
    except SpecError:
        raise
    except Exception as err:
        raise SpecError(f"traffic: {err}") from None
    return spec


def _link_layer(raw: Any, spec: Spec) -> dict[str, Any]:
    """Check the spec's `link_layer` and every variant's merged over it (errors name the key); a link layer
    asked of a BMv2 fabric is refused: BMv2 models no FCS errors, LLR or link flow control."""
    raw = {} if raw is None else raw
    try:
        LinkLayerConfig.parse(raw)
        active = [v.label for v in spec.variants if spec.link_layer_config_from(raw, v).active]
    except LinkLayerError as err:
        raise SpecError(str(err)) from None
    spec.link_layer = dict(raw)
    check_link_layer_target(spec, active)
    return dict(raw)


def check_link_layer_target(spec: Spec, active: list[str] | None = None) -> None:
    """A link layer asked of a BMv2 fabric is refused (also after `ethlab run --target bmv2`)."""
    if active is None:
        active = [v.label for v in spec.variants if spec.link_layer_config(v).active]
    _need(not (active and spec.target == "bmv2"), "link_layer",
          f"frame errors, LLR, PFC and CBFC (asked by {', '.join(active)}) are below what BMv2 models: "
          "use target p4exec")


def _clock(data: dict) -> tuple[str, dict[str, Any]]:
    from ethlab.experiment.virtual_trial import CLOCKS, VirtualOptionError, check_options

    clock = data.get("clock", "emulated")
    _need(clock in CLOCKS, "clock", f"must be one of {', '.join(CLOCKS)} (got {clock!r})")
    raw = data.get("virtual") or {}
    _need(isinstance(raw, dict), "virtual", "must be a mapping of virtual-clock options")
    try:
        return clock, check_options(raw)
    except VirtualOptionError as err:
        raise SpecError(str(err)) from None


def load_spec(path: str | Path) -> Spec:
    p = Path(path)
    try:
        data = yaml.safe_load(read_user_text(p, what="spec"))
    except InputFileError as err:
        raise SpecError(f"{err} (a spec is YAML)") from None
    except RecursionError:
        raise SpecError(f"{p}: nested too deep") from None
    except (OSError, yaml.YAMLError) as err:
        raise SpecError(f"{p}: {' '.join(str(err).split())}") from None
    return parse_spec(data, str(p))


def dump_json(obj: Any) -> str:
    return json.dumps(obj, indent=1, default=str)
