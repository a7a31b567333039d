"""Fabric topologies: the target-independent model, the built-ins, YAML topologies and the Mininet bring-up."""

from __future__ import annotations

from topologies.catalog import build, get, names
from topologies.model import Endpoint, Interface, Link, Node, NodeKind, Port, Topology, TopologyError
from topologies.yaml_loader import load, load_yaml, to_yaml

__all__ = [
    "Endpoint", "Interface", "Link", "Node", "NodeKind", "Port", "Topology", "TopologyError",
    "build", "get", "load", "load_yaml", "names", "to_yaml",
]
