"""The one wording of a mapping's unknown keys, shared by every checker of user YAML (spec, topology, `virtual:`,
`link_layer:`), so a user reads the same sentence wherever a key is misspelt."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def unknown_keys(d: Mapping[Any, Any], allowed: Iterable[str]) -> str | None:
    """`unknown key(s) a, b (known: ...)`, or None when every key is allowed. YAML keys may be null, numbers or
    booleans: they are named as text, never compared with the strings they sit beside."""
    known = set(allowed)
    extra = sorted(str(k) for k in d if k not in known)
    if not extra:
        return None
    return f"unknown key(s) {', '.join(extra)} (known: {', '.join(sorted(known))})"
