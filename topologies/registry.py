"""Registry of named topology builders with typed, defaulted parameters.

The CLI, the experiment runner and the tests all go through `build(name, **params)` (topologies/catalog.py,
which loads the built-ins), so a parameter is checked (unknown name, wrong type, below its minimum) in one
place and the result is always validated. This module only defines the registry the built-ins fill."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from topologies.model import Topology, TopologyError
from topologies.validate import validate


@dataclass(frozen=True)
class Param:
    name: str
    type: type  # int or float
    default: int | float
    help: str
    minimum: int | float = 1

    def convert(self, value: Any) -> int | float:
        try:
            if self.type is int and isinstance(value, float) and not value.is_integer():
                raise ValueError
            v = self.type(value)
        except (TypeError, ValueError, OverflowError):
            raise TopologyError(f"parameter {self.name}: expected {self.type.__name__}, got {value!r}") from None
        if not math.isfinite(v):
            raise TopologyError(f"parameter {self.name}: must be a finite number, got {value!r}")
        if v < self.minimum:
            raise TopologyError(f"parameter {self.name}: {v} is below the minimum {self.minimum}")
        return v


@dataclass(frozen=True)
class Builtin:
    name: str
    description: str
    params: tuple[Param, ...]
    builder: Callable[..., Topology]
    model_note: str = ""  # where the shape is ethlab's own model rather than a published design

    def param(self, name: str) -> Param:
        key = name.replace("-", "_")
        for p in self.params:
            if p.name == key:
                return p
        known = ", ".join(p.name for p in self.params)
        raise TopologyError(f"{self.name}: unknown parameter {name!r} (known: {known})")

    def resolve(self, **given: Any) -> dict[str, int | float]:
        values = {p.name: p.default for p in self.params}
        for k, v in given.items():
            p = self.param(k)
            values[p.name] = p.convert(v)
        return values

    def build(self, **given: Any) -> Topology:
        values = self.resolve(**given)
        topo = self.builder(**values)
        topo.params = dict(values)
        topo.description = self.description
        return validate(topo)


REGISTRY: dict[str, Builtin] = {}


def register(name: str, description: str, params: tuple[Param, ...], model_note: str = ""
             ) -> Callable[[Callable[..., Topology]], Callable[..., Topology]]:
    def deco(fn: Callable[..., Topology]) -> Callable[..., Topology]:
        REGISTRY[name] = Builtin(name, description, params, fn, model_note)
        return fn

    return deco
