"""User topologies in YAML (schema in docs/topologies.md), and `load()` for "a built-in name or a file".

The loader builds through the same `Topology.add_*` calls as the built-ins, so YAML topologies get the same
port/id/address rules and the same errors; `to_yaml` writes explicit ports and ids so a dump loads back
into an identical topology."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from p4exec.textfile import InputFileError, read_user_text
from topologies.catalog import build, names
from topologies.keys import unknown_keys
from topologies.model import MAX_SWITCH_PORT, Topology, TopologyError
from topologies.validate import validate

_TOP_KEYS = {"name", "description", "defaults", "switches", "hosts", "links"}
_SWITCH_KEYS = {"name", "plane", "tier", "radix", "role", "attrs"}
_HOST_KEYS = {"name", "eid", "role", "attrs"}
_LINK_KEYS = {"a", "b", "a_port", "b_port", "rate_gbps", "delay_us"}
_DEFAULT_KEYS = {"rate_gbps", "delay_us", "radix"}


def _check_keys(what: str, d: Any, allowed: set[str], required: frozenset[str] | set[str] = frozenset()) -> dict:
    if not isinstance(d, dict):
        raise TopologyError(f"{what}: expected a mapping, got {type(d).__name__}")
    unknown = unknown_keys(d, allowed)
    if unknown:
        raise TopologyError(f"{what}: {unknown}")
    missing = set(required) - set(d)
    if missing:
        raise TopologyError(f"{what}: missing key(s) {', '.join(sorted(missing))}")
    return d


def _link_entry(i: int, item: Any) -> dict:
    """A link is a mapping, or the short form [a, b] / "a b"."""
    if isinstance(item, str):
        item = item.split()
    if isinstance(item, list):
        if len(item) != 2:
            raise TopologyError(f"links[{i}]: short form needs exactly two node names, got {item!r}")
        return {"a": str(item[0]), "b": str(item[1])}
    return _check_keys(f"links[{i}]", item, _LINK_KEYS, {"a", "b"})


def from_dict(doc: Any, source: str = "<yaml>") -> Topology:
    """Build and validate a topology from the parsed YAML document."""
    try:
        doc = _check_keys(source, doc, _TOP_KEYS, {"name", "switches", "links"})
        defaults = _check_keys(f"{source}: defaults", doc.get("defaults") or {}, _DEFAULT_KEYS)
        rate = float(defaults.get("rate_gbps", 100.0))
        delay = float(defaults.get("delay_us", 0.0))
        radix = int(defaults.get("radix", MAX_SWITCH_PORT))
        t = Topology(str(doc["name"]), description=str(doc.get("description", "")))
        for i, h in enumerate(doc.get("hosts") or []):
            h = _check_keys(f"hosts[{i}]", h if isinstance(h, dict) else {"name": h}, _HOST_KEYS, {"name"})
            t.add_host(str(h["name"]), eid=h.get("eid"), role=h.get("role", "host"), **(h.get("attrs") or {}))
        for i, s in enumerate(doc.get("switches") or []):
            s = _check_keys(f"switches[{i}]", s if isinstance(s, dict) else {"name": s}, _SWITCH_KEYS, {"name"})
            t.add_switch(str(s["name"]), tier=int(s.get("tier", 1)), plane=int(s.get("plane", 0)),
                         radix=int(s.get("radix", radix)), role=str(s.get("role", "")), **(s.get("attrs") or {}))
        for i, item in enumerate(doc.get("links") or []):
            ln = _link_entry(i, item)
            t.add_link(str(ln["a"]), str(ln["b"]), rate_gbps=float(ln.get("rate_gbps", rate)),
                       delay_us=float(ln.get("delay_us", delay)), a_port=ln.get("a_port"), b_port=ln.get("b_port"))
    except TopologyError as e:
        raise TopologyError(f"{source}: {e}") from None
    except (TypeError, ValueError) as e:
        raise TopologyError(f"{source}: bad value: {e}") from None
    t.params = {"file": source}
    try:
        return validate(t)
    except TopologyError as e:
        raise TopologyError(f"{source}: {e}") from None


def load_yaml(path: str | Path) -> Topology:
    path = Path(path)
    try:
        doc = yaml.safe_load(read_user_text(path, what="topology"))
    except InputFileError as e:
        raise TopologyError(str(e)) from None
    except (yaml.YAMLError, RecursionError) as e:
        raise TopologyError(f"{path}: not valid YAML: {' '.join(str(e).split())}") from None
    except OSError as e:
        raise TopologyError(f"{path}: {e.strerror}") from None
    return from_dict(doc, str(path))


def to_dict(t: Topology) -> dict[str, Any]:
    """Explicit form: every host's eid and every link's ports, so loading it back changes nothing."""
    return {
        "name": t.name,
        "description": t.description,
        "hosts": [{"name": n.name, "eid": t.endpoints[n.name].eid, "role": n.role,
                   **({"attrs": dict(n.attrs)} if n.attrs else {})} for n in t.hosts],
        "switches": [{"name": n.name, "plane": n.plane, "tier": n.tier, "radix": n.radix, "role": n.role,
                      **({"attrs": dict(n.attrs)} if n.attrs else {})} for n in t.switches],
        "links": [{"a": ln.a.owner, "a_port": ln.a.number, "b": ln.b.owner, "b_port": ln.b.number,
                   "rate_gbps": ln.rate_gbps, "delay_us": ln.delay_us} for ln in t.links],
    }


def to_yaml(t: Topology) -> str:
    return yaml.safe_dump(to_dict(t), sort_keys=False)


def load(spec: str, **params: Any) -> Topology:
    """A built-in name (with params) or a path to a YAML file (no params)."""
    if spec in names():
        return build(spec, **params)
    if spec.endswith((".yaml", ".yml")) or Path(spec).exists():
        if params:
            raise TopologyError(f"{spec}: parameters {sorted(params)} apply to built-ins only")
        return load_yaml(spec)
    raise TopologyError(f"unknown topology {spec!r}: not a built-in ({', '.join(names())}) nor a YAML file")
