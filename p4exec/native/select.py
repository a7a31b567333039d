"""The one choice between the Python and the native pipeline (`--pipeline`, `fabric.pipeline`, P4EXEC_PIPELINE).

`native` (the default where a C compiler is present) builds the C pipeline when the program's constructs are
supported, and otherwise logs one line saying why and runs the Python pipeline, which stays the reference. With
no C compiler the default is `python`, said once per process.
"""
from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from p4exec.v1model.pipeline import V1Pipeline

log = logging.getLogger("p4exec.native")

CHOICES = ("python", "native")
_declined: dict[int, str] = {}      # id(compiled program) -> why it runs in Python (said once per program)


_override: list[str] = []


def set_default(kind: str) -> None:
    """The pipeline of every later load in this process (`--pipeline`)."""
    if kind not in CHOICES:
        raise ValueError(f"unknown pipeline {kind!r} (one of {', '.join(CHOICES)})")
    _override[:] = [kind]


@contextmanager
def pipeline_choice(kind: str | None) -> Iterator[None]:
    """`fabric.pipeline` for one trial: switches loaded in this process and `p4exec switch` processes started
    meanwhile (through P4EXEC_PIPELINE) use `kind`; None changes nothing."""
    if kind is None:
        yield
        return
    saved, env = list(_override), os.environ.get("P4EXEC_PIPELINE")
    set_default(kind)
    os.environ["P4EXEC_PIPELINE"] = kind
    try:
        yield
    finally:
        _override[:] = saved
        if env is None:
            os.environ.pop("P4EXEC_PIPELINE", None)
        else:
            os.environ["P4EXEC_PIPELINE"] = env


_said_no_cc: list[bool] = []


def default_pipeline() -> str:
    """`--pipeline`, else $P4EXEC_PIPELINE, else native where a C compiler is present (python otherwise, said
    once: the two give the same packets, see docs/p4exec-native.md)."""
    if _override:
        return _override[0]
    v = os.environ.get("P4EXEC_PIPELINE", "").strip().lower()
    if v in CHOICES:
        return v
    from p4exec.native.build import compiler_available
    if compiler_available() is not None:
        return "native"
    if not _said_no_cc:
        _said_no_cc.append(True)
        log.warning("p4exec: no C compiler found (%s); running the Python pipeline",
                    os.environ.get("CC") or "cc/gcc on PATH")
    return "python"


def make_pipeline(compiled: Any, state: Any, seed: int = 0, kind: str | None = None) -> Any:
    kind = kind or default_pipeline()
    if kind not in CHOICES:
        raise ValueError(f"unknown pipeline {kind!r} (one of {', '.join(CHOICES)})")
    if kind == "native":
        why = _declined.get(id(compiled))
        if why is None:
            try:
                from p4exec.native.build import BuildError
                from p4exec.native.cgen import Unsupported
                from p4exec.native.pipeline import NativePipeline
                return NativePipeline(compiled, state, seed)
            except (Unsupported, BuildError) as e:
                why = str(e)
            _declined[id(compiled)] = why
            log.warning("p4exec: native pipeline not used for %s (%s); running the Python pipeline",
                        compiled.filename, why)
    return V1Pipeline(compiled, state, seed)


def native_reason(compiled: Any) -> str | None:
    """Why the native pipeline declined this program (None: it did not, or was not tried)."""
    return _declined.get(id(compiled))
