"""The catalog of named topologies: the registry once every built-in has registered itself."""

from __future__ import annotations

from typing import Any

from topologies import builtins  # noqa: F401  (registers the built-ins)
from topologies.model import Topology, TopologyError
from topologies.registry import REGISTRY, Builtin

__all__ = ["REGISTRY", "Builtin", "build", "get", "names"]


def get(name: str) -> Builtin:
    try:
        return REGISTRY[name]
    except KeyError:
        raise TopologyError(f"unknown topology {name!r} (known: {', '.join(sorted(REGISTRY))})") from None


def build(name: str, **params: Any) -> Topology:
    return get(name).build(**params)


def names() -> list[str]:
    return list(REGISTRY)
